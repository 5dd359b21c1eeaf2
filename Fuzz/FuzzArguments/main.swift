import Foundation
import FuzzSupport
import Logging
import PorticoAuth
import PorticoDemo
import PorticoJSON
import PorticoMCP
import PorticoStore

@testable import PorticoData
@testable import PorticoTools

FuzzSupport.run { data, size in fuzzArguments(data!, size) }

/// libFuzzer target: tool arguments. The first byte picks a data tool, the rest is its
/// `arguments`. They are validated against the tool's input schema; read tools then run for real
/// over the Chinook sample (with a short statement limit), write tools are read into a request.
/// Bad arguments must come back as a validation problem or a tool error, never as a crash or
/// as SQL the database rejects.
@_cdecl("LLVMFuzzerTestOneInput")
func fuzzArguments(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    guard size > 0, case .object(let arguments)? = FuzzSupport.json(data.advanced(by: 1), size - 1) else { return 0 }
    let tool = Harness.tools[Int(data[0]) % Harness.tools.count]
    if SchemaValidator().validate(.object(arguments), against: tool.inputSchema) != nil { return 0 }
    guard tool.annotations.readOnly else {
        guard case .data(let action) = tool.access else { return 0 }
        let input = ToolInput(arguments, declared: DataParameters.declared(for: action).map(\.name))
        if let request = try? DataParameters.record(input, action), let values = request.values,
            let collection = try? Harness.catalog.collection(request.resource)
        {
            _ = try? Assignment(
                values: values, collection: collection, catalog: Harness.catalog, access: .unrestricted, whitelist: request.whitelist,
                blacklist: request.blacklist)
        }
        return 0
    }
    let context = CallContext(
        app: "main", principal: Harness.principal, requestID: .int(1), protocolVersion: "2025-11-25", clientCapabilities: [:],
        logger: Harness.logger, progressToken: nil, logLevel: nil, sink: nil)
    let handler = tool.handler
    let mapError = tool.mapError
    let outcome: String? = FuzzSupport.blocking {
        do {
            _ = try await handler(arguments, context)
            return nil
        } catch {
            // What the endpoint does with it: the tool's error map, and a tool error is an answer.
            if (mapError?(error) ?? error) is ToolError { return nil }
            return "\(type(of: error)): \(error)"
        }
    }
    if let outcome {
        fatalError("\(tool.name) failed unexpectedly: \(outcome)\narguments: \(JSON.object(arguments).serializedString.prefix(400))")
    }
    return 0
}

enum Harness {
    static let logger = Logger(label: "fuzz") { _ in SwiftLogNoOpLogHandler() }
    static let principal = Principal(userID: 1, userName: "fuzz", credential: .apiKey(id: "fuzz"), scopes: nil, role: .admin)

    static let records: RecordService = FuzzSupport.blocking {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("portico-fuzz-\(UUID().uuidString)")
        do {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            var options = SQLiteStore.Options()
            options.statementTimeout = .milliseconds(200)
            let store = try SQLiteStore(path: directory.appendingPathComponent("fuzz.sqlite").path, options: options, logger: logger)
            try await Migrator().migrate(store)
            let catalogs = CatalogStore(database: store)
            try await DemoData.install(catalogs: catalogs, logger: logger)
            return RecordService(catalogs: catalogs)
        } catch {
            fatalError("could not set up the fuzz database: \(error)")
        }
    }

    static let catalog: Catalog = FuzzSupport.blocking {
        do { return try await records.catalogs.catalog(app: "main") } catch { fatalError("\(error)") }
    }

    static let tools = DataPackage(records: records).package.tools
}
