import Hummingbird
import Metrics
import NIOCore
import PorticoMCP
import Prometheus

/// `GET /metrics`: Portico's metrics in Prometheus's text format.
struct MetricsController {
    let registry: PrometheusCollectorRegistry
    let endpoint: MCPEndpoint
    private let streams = Gauge(label: "portico_mcp_streams_open")
    private let calls = Gauge(label: "portico_mcp_calls_in_progress")
    private let sessions = Gauge(label: "portico_mcp_sessions_active")
    private let tasks = Gauge(label: "portico_mcp_tasks_running")

    init(registry: PrometheusCollectorRegistry, endpoint: MCPEndpoint) {
        self.registry = registry
        self.endpoint = endpoint
    }

    /// The process's registry: made on first use, which installs the Prometheus backend for
    /// swift-metrics (once per process, before any metric is made).
    static let registry: PrometheusCollectorRegistry = bootstrap()

    private static func bootstrap() -> PrometheusCollectorRegistry {
        let registry = PrometheusCollectorRegistry()
        var factory = PrometheusMetricsFactory(registry: registry)
        // Portico's calls take from a fraction of a millisecond to seconds.
        factory.defaultDurationHistogramBuckets = [
            .microseconds(500), .milliseconds(1), .milliseconds(2), .milliseconds(5), .milliseconds(10), .milliseconds(25),
            .milliseconds(50), .milliseconds(100), .milliseconds(250), .milliseconds(500), .seconds(1), .milliseconds(2500),
            .seconds(5), .seconds(10), .seconds(30),
        ]
        MetricsSystem.bootstrap(factory)
        return registry
    }

    func addRoutes(to router: Router<PorticoRequestContext>) {
        router.get("metrics") { _, _ in
            streams.record(endpoint.openStreams)
            calls.record(endpoint.callsInProgress)
            sessions.record(endpoint.activeSessions)
            tasks.record(endpoint.tasksRunning)
            var buffer: [UInt8] = []
            buffer.reserveCapacity(16 * 1024)
            registry.emit(into: &buffer)
            return Response(
                status: .ok, headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8"],
                body: .init(byteBuffer: ByteBuffer(bytes: buffer)))
        }
    }
}
