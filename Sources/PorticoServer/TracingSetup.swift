import Logging
import OTel
import PorticoData
import PorticoInstance
import PorticoStore
import ServiceLifecycle
import Tracing

/// OpenTelemetry traces (swift-otel, OTLP/HTTP), on only with `--otel-endpoint`: spans for HTTP
/// requests, tool calls, SQL statements and LLM calls go to the collector in batches. The
/// standard `OTEL_*` variables (protocol, headers, batch delays, sampler) refine the setup.
enum TracingSetup {
    /// Bootstraps the process's tracer; returns the service that exports the spans, to run beside the server.
    static func start(endpoint: String, logger: Logger) throws -> any Service {
        var configuration = OTel.Configuration.default
        configuration.serviceName = "portico"
        configuration.resourceAttributes = ["service.version": porticoVersion]
        configuration.logs.enabled = false
        configuration.metrics.enabled = false
        configuration.diagnosticLogger = .custom(logger)
        configuration.diagnosticLogLevel = .warning
        configuration.propagators = [.traceContext]
        configuration.traces.otlpExporter.endpoint = Self.tracesURL(endpoint)
        // Bounded: at most 2,048 spans wait for export, 512 go in one request, each export gives up after 10 s.
        configuration.traces.batchSpanProcessor.maxQueueSize = 2048
        configuration.traces.batchSpanProcessor.maxExportBatchSize = 512
        configuration.traces.otlpExporter.timeout = .seconds(10)
        let backend = try OTel.makeTracingBackend(configuration: configuration)
        InstrumentationSystem.bootstrap(backend.factory)
        Traces.enable()
        return backend.service
    }

    /// The collector's base URL with OTLP/HTTP's path for traces, unless it has it already.
    static func tracesURL(_ endpoint: String) -> String {
        var base = endpoint
        while base.hasSuffix("/") { base.removeLast() }
        return base.hasSuffix("/v1/traces") ? base : base + "/v1/traces"
    }
}
