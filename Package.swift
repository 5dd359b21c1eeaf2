// swift-tools-version: 6.2
import Foundation
import PackageDescription

// CI builds Portico's own targets with warnings as errors (`.ci/run` sets PORTICO_WARNINGS_AS_ERRORS=1);
// the dependencies' warnings are theirs.
let strict: [SwiftSetting] =
    ProcessInfo.processInfo.environment["PORTICO_WARNINGS_AS_ERRORS"] == "1" ? [.treatAllWarnings(as: .error)] : []

let upcoming: [SwiftSetting] =
    [
        .enableUpcomingFeature("ExistentialAny"),
        .enableUpcomingFeature("MemberImportVisibility"),
        .enableUpcomingFeature("InternalImportsByDefault"),
    ] + strict

let package = Package(
    name: "portico",
    platforms: [.macOS(.v14)],
    products: [
        .executable(name: "portico", targets: ["Portico"])
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-crypto", from: "4.5.2"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-nio-extras", from: "1.35.2"),
        .package(url: "https://github.com/apple/swift-collections", from: "1.6.0"),
        .package(url: "https://github.com/apple/swift-http-types", from: "1.8.0"),
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        .package(url: "https://github.com/hummingbird-project/hummingbird-auth", from: "2.5.0"),
        .package(url: "https://github.com/apple/swift-metrics", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.4.1"),
        .package(url: "https://github.com/vapor/jwt-kit", from: "5.7.1"),
        .package(url: "https://github.com/hummingbird-project/swift-mustache", from: "2.1.1"),
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.37.0"),
        .package(url: "https://github.com/vapor/postgres-nio", from: "1.33.2"),
        .package(url: "https://github.com/apple/swift-nio-ssl", from: "2.37.6"),
        .package(url: "https://github.com/apple/swift-distributed-tracing", from: "1.7.3"),
        // Traces exported over OTLP/HTTP only: the gRPC exporter (and its build) is left out.
        .package(url: "https://github.com/swift-otel/swift-otel", from: "1.6.0", traits: ["OTLPHTTP"]),
        // Semantic models in YAML: Portico's own, dbt MetricFlow's and Snowflake Cortex Analyst's.
        .package(url: "https://github.com/jpsim/Yams", from: "6.2.2"),
    ],
    targets: [
        // The system's SQLite (Debian's libsqlite3-dev), driven by PorticoData's own connection layer.
        .systemLibrary(name: "CSQLite", pkgConfig: "sqlite3", providers: [.apt(["libsqlite3-dev"])]),
        // MariaDB Connector/C (Debian's libmariadb-dev), which MySQL and MariaDB datasources are read with.
        .systemLibrary(name: "CMariaDB", pkgConfig: "libmariadb", providers: [.apt(["libmariadb-dev"])]),
        // WordNet 3.0 compiled by scripts/make_lexicon.py (the Makefile runs it before building) and
        // embedded with C23's #embed, so the binary carries its English; PorticoLexicon reads it in place.
        .target(name: "CLexicon", exclude: ["LICENSE-WordNet.txt"], cSettings: [.unsafeFlags(["-std=c23"])]),
        .target(name: "CTaskHook"),
        .target(name: "PorticoLexicon", dependencies: ["CLexicon"], swiftSettings: upcoming),
        // What every module shares and nothing else owns: locked state, the bounded cache, hex and
        // base64url, random secrets and digests, and the master key that seals secrets at rest.
        .target(
            name: "PorticoBase",
            dependencies: [.product(name: "Crypto", package: "swift-crypto")],
            swiftSettings: upcoming
        ),
        .target(
            name: "PorticoJSON",
            dependencies: [.product(name: "OrderedCollections", package: "swift-collections")],
            swiftSettings: upcoming
        ),
        // Where Portico keeps its own state: the `Database` seam over SQLite and PostgreSQL, SQL
        // built as fragments, migrations, the change signal between replicas, the clock and tracing.
        // It names no collection, workflow, tool or MCP concept.
        .target(
            name: "PorticoStore",
            dependencies: [
                "PorticoJSON", "PorticoBase", "CSQLite",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
            ],
            swiftSettings: upcoming
        ),
        // The collections domain: collections and fields, records read and written through the
        // scoped catalog, filters, roles' rules, and the tables of Portico's own state.
        .target(
            name: "PorticoData",
            dependencies: [
                "PorticoStore", "PorticoJSON", "PorticoBase",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            swiftSettings: upcoming
        ),
        // The Chinook sample that `--demo` and `portico app create --demo` load: its script is a
        // resource of its own target, so the data layer does not ship it.
        .target(
            name: "PorticoDemo",
            dependencies: ["PorticoData", "PorticoStore", "PorticoBase", .product(name: "Logging", package: "swift-log")],
            resources: [.copy("chinook")],
            swiftSettings: upcoming
        ),
        // The system's Cairo (Debian's libcairo2-dev), which chart images are drawn with.
        .systemLibrary(name: "CCairo", pkgConfig: "cairo", providers: [.apt(["libcairo2-dev"])]),
        .target(name: "PorticoCharts", dependencies: ["CCairo"], swiftSettings: upcoming),
        // What an engine is asked and answers (`AskEngine`), with the schema read as words and the
        // datasource's values: the seam the built-in engine and the LLM engine sit behind.
        .target(
            name: "PorticoAskEngine", dependencies: ["PorticoStore", "PorticoJSON", "PorticoBase", "PorticoLexicon"],
            swiftSettings: upcoming),
        // The built-in engine: English read in passes over the schema, no model and no network.
        .target(
            name: "PorticoBuiltinEngine", dependencies: ["PorticoAskEngine", "PorticoStore", "PorticoBase", "PorticoLexicon"],
            swiftSettings: upcoming),
        // The databases questions and SQL read, always read-only: SQLite (with the bounded
        // functions), PostgreSQL and MySQL/MariaDB (a C client): only what asks questions links them.
        .target(
            name: "PorticoSources",
            dependencies: [
                "PorticoJSON", "PorticoBase", "PorticoStore", "CSQLite", "CMariaDB",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ],
            swiftSettings: upcoming),
        .target(
            name: "PorticoAsk",
            dependencies: [
                "PorticoAskEngine", "PorticoBuiltinEngine",
                "PorticoData", "PorticoStore", "PorticoSources", "PorticoAuth", "PorticoJSON", "PorticoBase", "PorticoCharts", "PorticoLexicon",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
                .product(name: "Yams", package: "Yams"),
            ],
            swiftSettings: upcoming),
        .target(
            name: "PorticoAuth",
            dependencies: [
                "PorticoJSON", "PorticoBase", "PorticoData", "PorticoStore",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "HummingbirdBcrypt", package: "hummingbird-auth"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "JWTKit", package: "jwt-kit"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ],
            swiftSettings: upcoming
        ),
        .target(
            name: "PorticoMCP",
            dependencies: [
                "PorticoJSON", "PorticoBase", "PorticoAuth", "PorticoData", "PorticoStore",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
            ],
            swiftSettings: upcoming
        ),
        // NocoBase's automation: workflows, their triggers and nodes, and the durable executions
        // that run them as their owners through the data seam.
        .target(
            name: "PorticoWorkflow",
            dependencies: [
                "PorticoJSON", "PorticoBase", "PorticoData", "PorticoStore", "PorticoAuth", "PorticoAsk", "PorticoAskEngine",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
            ],
            swiftSettings: upcoming
        ),
        .target(
            name: "PorticoTools",
            dependencies: [
                "PorticoJSON", "PorticoBase", "PorticoData", "PorticoStore", "PorticoAuth", "PorticoMCP", "PorticoAsk", "PorticoSources", "PorticoAskEngine",
                "PorticoCharts", "PorticoWorkflow",
            ],
            swiftSettings: upcoming
        ),
        // One instance's stores, apps, export/import and the services built over them: what the
        // server and the command line share, without HTTP.
        .target(
            name: "PorticoInstance",
            dependencies: [
                "PorticoJSON", "PorticoBase", "PorticoData", "PorticoStore", "PorticoAuth", "PorticoMCP", "PorticoTools", "PorticoAsk", "PorticoDemo",
                "PorticoWorkflow",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: upcoming
        ),
        .target(
            name: "PorticoServer",
            dependencies: [
                "PorticoJSON", "PorticoBase", "PorticoData", "PorticoStore", "PorticoAuth", "PorticoMCP", "PorticoAsk", "PorticoAskEngine", "PorticoCharts",
                "PorticoInstance",
                "PorticoWorkflow", .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
                .product(name: "Mustache", package: "swift-mustache"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "NIOHTTPTypes", package: "swift-nio-extras"),
                .product(name: "NIOHTTPTypesHTTP1", package: "swift-nio-extras"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
                .product(name: "OTel", package: "swift-otel"),
            ],
            resources: [.copy("Templates")],
            swiftSettings: upcoming
        ),
        .executableTarget(
            name: "Portico",
            dependencies: [
                "PorticoServer", "PorticoInstance", "PorticoTools", "PorticoData", "PorticoStore", "PorticoAuth", "PorticoAsk", "PorticoAskEngine",
                "PorticoJSON", "PorticoBase", "PorticoCharts",
                "PorticoDemo", "PorticoWorkflow", "CTaskHook", .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: upcoming,
            linkerSettings: [.unsafeFlags(["-use-ld=lld", "-Xlinker", "-z", "-Xlinker", "pack-relative-relocs", "-Xlinker", "--no-export-dynamic"], .when(platforms: [.linux]))]
        ),
        .testTarget(name: "PorticoJSONTests", dependencies: ["PorticoJSON", "PorticoBase"], swiftSettings: upcoming),
        // What the store tests of several targets share: the databases they run on.
        .target(
            name: "PorticoTestSupport", dependencies: ["PorticoData", "PorticoStore", .product(name: "Logging", package: "swift-log")], path: "Tests/Support",
            swiftSettings: upcoming),
        .testTarget(name: "PorticoStoreTests", dependencies: ["PorticoStore", "PorticoTestSupport"], swiftSettings: upcoming),
        .testTarget(name: "PorticoDataTests", dependencies: ["PorticoData", "PorticoStore", "PorticoTestSupport"], swiftSettings: upcoming),
        .testTarget(
            name: "PorticoWorkflowTests",
            dependencies: [
                "PorticoWorkflow", "PorticoData", "PorticoStore", "PorticoJSON", "PorticoAuth", "PorticoTestSupport",
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: upcoming),
        .testTarget(
            name: "PorticoBuiltinEngineTests", dependencies: ["PorticoBuiltinEngine", "PorticoAskEngine", "PorticoStore"],
            swiftSettings: upcoming),
        .testTarget(
            name: "PorticoAskTests",
            dependencies: [
                "PorticoAsk", "PorticoAskEngine", "PorticoBuiltinEngine", "PorticoAuth", "PorticoData", "PorticoStore", "PorticoSources", "PorticoCharts",
                "PorticoTestSupport",
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: upcoming),
        .testTarget(
            name: "PorticoToolsTests",
            dependencies: [
                "PorticoTools", "PorticoAsk", "PorticoAuth", "PorticoData", "PorticoJSON", "PorticoBase", "PorticoMCP",
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: upcoming),
        .testTarget(
            name: "PorticoServerTests",
            dependencies: [
                "PorticoServer", "PorticoInstance", "PorticoAsk", "PorticoAuth", "PorticoData", "PorticoStore", "PorticoTestSupport",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOHTTPTypesHTTP1", package: "swift-nio-extras"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: upcoming),
        .testTarget(name: "PorticoMCPTests", dependencies: ["PorticoMCP", "PorticoAuth", "PorticoData", "PorticoBase"], swiftSettings: upcoming),
        .testTarget(
            name: "PorticoInstanceTests",
            dependencies: [
                "PorticoInstance", "PorticoAuth", "PorticoBase", "PorticoData", "PorticoMCP", "PorticoJSON", "PorticoTestSupport",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: upcoming),
        .testTarget(name: "PorticoLexiconTests", dependencies: ["PorticoLexicon"], swiftSettings: upcoming),
        .testTarget(
            name: "PorticoAuthTests",
            dependencies: [
                "PorticoAuth", "PorticoData", "PorticoStore", "PorticoTestSupport", .product(name: "JWTKit", package: "jwt-kit"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: upcoming
        ),
    ]
)

// libFuzzer targets (`make fuzz`, and a short run in `make test`): built only with PORTICO_FUZZ=1,
// in their own build folder, with `-sanitize=fuzzer` on every Swift module.
if ProcessInfo.processInfo.environment["PORTICO_FUZZ"] == "1" {
    let fuzzSettings = upcoming
    let log = Target.Dependency.product(name: "Logging", package: "swift-log")
    let http = Target.Dependency.product(name: "HTTPTypes", package: "swift-http-types")
    package.targets += [
        .target(
            name: "FuzzSupport", dependencies: ["PorticoData", "PorticoStore", "PorticoDemo", "PorticoJSON", "PorticoBase", log], path: "Fuzz/Support",
            swiftSettings: upcoming),
        .executableTarget(name: "FuzzJSON", dependencies: ["FuzzSupport", "PorticoJSON", "PorticoBase"], path: "Fuzz/FuzzJSON", swiftSettings: fuzzSettings),
        .executableTarget(
            name: "FuzzJSONRPC", dependencies: ["FuzzSupport", "PorticoMCP", "PorticoAuth", "PorticoData", "PorticoJSON", "PorticoBase", log, http],
            path: "Fuzz/FuzzJSONRPC",
            swiftSettings: fuzzSettings),
        .executableTarget(
            name: "FuzzFilter", dependencies: ["FuzzSupport", "PorticoData", "PorticoStore", "PorticoJSON", "PorticoBase"], path: "Fuzz/FuzzFilter",
            swiftSettings: fuzzSettings
        ),
        .executableTarget(
            name: "FuzzArguments",
            dependencies: [
                "FuzzSupport", "PorticoTools", "PorticoMCP", "PorticoAuth", "PorticoData", "PorticoStore", "PorticoDemo", "PorticoJSON", "PorticoBase", log,
            ],
            path: "Fuzz/FuzzArguments", swiftSettings: fuzzSettings),
        .executableTarget(
            name: "FuzzCalculation", dependencies: ["FuzzSupport", "PorticoWorkflow", "PorticoJSON"], path: "Fuzz/FuzzCalculation", swiftSettings: fuzzSettings),
        .executableTarget(
            name: "FuzzWorkflow", dependencies: ["FuzzSupport", "PorticoWorkflow", "PorticoJSON"], path: "Fuzz/FuzzWorkflow", swiftSettings: fuzzSettings),
    ]
    package.products += ["FuzzJSON", "FuzzJSONRPC", "FuzzFilter", "FuzzArguments", "FuzzCalculation", "FuzzWorkflow"].map {
        .executable(name: $0, targets: [$0])
    }
}
