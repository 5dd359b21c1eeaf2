import Logging
import PorticoMCP
import ServiceLifecycle

/// Runs the MCP endpoint's request deadlines and starts its shutdown: listed after the HTTP
/// server, it hears the shutdown signal first, so new requests get 503, event streams end and
/// calls still running after `grace` are cancelled while the server drains its connections.
struct EndpointService: Service {
    let endpoint: MCPEndpoint
    let grace: Duration

    func run() async throws {
        await withGracefulShutdownHandler {
            await cancelWhenGracefulShutdown { await endpoint.enforceDeadlines() }
        } onGracefulShutdown: {
            endpoint.beginShutdown(grace: grace)
        }
    }
}
