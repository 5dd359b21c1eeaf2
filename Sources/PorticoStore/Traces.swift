import Synchronization
public import Tracing

/// Portico's tracing, on only when the server exports spans (`--otel-endpoint`): off, no span is
/// made and nothing on the hot path reads the task's context, so an untraced server pays one
/// relaxed atomic load per would-be span.
public enum Traces {
    private static let on = Atomic<Bool>(false)

    public static var isOn: Bool { on.load(ordering: .relaxed) }

    /// Called once the global tracer is bootstrapped.
    public static func enable() { on.store(true, ordering: .relaxed) }

    /// Runs `body` in a span named `name` (a child of the task's current span), or without one
    /// when tracing is off. An error thrown by `body` marks the span failed with the error's type
    /// (`error.type`) and is rethrown; its message is not recorded, since a database's message
    /// may quote the statement's values.
    public static func span<T, E: Error>(
        _ name: String, kind: SpanKind = .internal, context: ServiceContext? = nil, isolation: isolated (any Actor)? = #isolation,
        _ body: (_ span: (any Span)?) async throws(E) -> T
    ) async throws(E) -> T {
        guard isOn else { return try await body(nil) }
        let outcome: Result<T, E> = await withSpan(name, context: context ?? ServiceContext.current ?? .topLevel, ofKind: kind, isolation: isolation) {
            span in
            do throws(E) {
                return .success(try await body(span))
            } catch {
                span.setStatus(SpanStatus(code: .error))
                span.attributes["error.type"] = errorType(error)
                return .failure(error)
            }
        }
        return try outcome.get()
    }

    /// What kind of error ended a span, never what it says: `StoreError.timeout`, `DatasourceError`.
    static func errorType(_ error: any Error) -> String {
        if let error = error as? StoreError { return "StoreError.\(error.kind)" }
        return String(describing: type(of: error))
    }

    /// A span for one statement of Portico's own store, inside a traced request: the operation
    /// and the rows, never the statement's values (nor its text, which may hold literals).
    static func statement(_ statement: SQLFragment, system: String, _ run: () async throws -> [Row]) async throws -> [Row] {
        let operation = Self.operation(of: statement.rendered().sql)
        return try await span(operation + " portico", kind: .client) { span in
            span?.attributes["db.system.name"] = system
            span?.attributes["db.namespace"] = "portico"
            span?.attributes["db.operation.name"] = operation
            let rows = try await run()
            span?.attributes["db.response.returned_rows"] = rows.count
            return rows
        }
    }

    /// The statement's first keyword (`SELECT`, `INSERT`, …), or `SQL`.
    public static func operation(of sql: String) -> String {
        let word = sql.drop { $0 == " " || $0 == "\n" || $0 == "(" }.prefix { $0.isLetter }.uppercased()
        return ["SELECT", "INSERT", "UPDATE", "DELETE", "WITH", "BEGIN", "COMMIT", "ROLLBACK", "CREATE", "ALTER", "DROP", "PRAGMA", "EXPLAIN"].contains(word)
            ? word : "SQL"
    }

    /// The W3C trace context of the current span (`traceparent`, `tracestate`), to send onwards.
    public static func currentHeaders() -> [String: String] {
        guard isOn, let context = ServiceContext.current else { return [:] }
        var headers: [String: String] = [:]
        InstrumentationSystem.instrument.inject(context, into: &headers, using: DictionaryInjector())
        return headers
    }

    /// A context whose parent is the W3C `traceparent` (and `tracestate`) given, for a span that
    /// continues a trace a client started (`_meta.traceparent` in 2026-07-28).
    public static func context(traceparent: String, tracestate: String?) -> ServiceContext? {
        guard isOn else { return nil }
        var carrier = ["traceparent": traceparent]
        if let tracestate { carrier["tracestate"] = tracestate }
        var context = ServiceContext.current ?? .topLevel
        InstrumentationSystem.instrument.extract(carrier, into: &context, using: DictionaryExtractor())
        return context
    }

    /// A sqlcommenter comment naming the current span, appended to SQL sent to a database server so
    /// that its logs join the trace: `/*application='portico',traceparent='00-…-…-01'*/`. Only
    /// the ids: no value of the query goes into it.
    public static func sqlComment() -> String? {
        guard let traceparent = currentHeaders()["traceparent"], traceparent.utf8.allSatisfy({ $0 == UInt8(ascii: "-") || $0.isHexDigit }) else {
            return nil
        }
        return "/*application='portico',traceparent='\(traceparent)'*/"
    }
}

struct DictionaryInjector: Injector {
    func inject(_ value: String, forKey key: String, into carrier: inout [String: String]) { carrier[key] = value }
}

struct DictionaryExtractor: Extractor {
    func extract(key: String, from carrier: [String: String]) -> String? { carrier[key] }
}

extension UInt8 {
    fileprivate var isHexDigit: Bool { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(self) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains(self) }
}
