import Hummingbird
import Logging
import NIOCore
import PorticoData
import PorticoStore

/// `GET /healthz` (the process is up) and `GET /readyz` (it can reach its database).
struct HealthController {
    let database: any Database

    func addRoutes(to router: Router<PorticoRequestContext>) {
        router.get("healthz") { _, _ in
            Response(status: .ok, headers: [.contentType: "text/plain"], body: .init(byteBuffer: ByteBuffer(staticString: "ok\n")))
        }
        router.get("readyz") { _, context in
            do {
                _ = try await database.query("SELECT 1 AS ok")
                return Response(
                    status: .ok, headers: [.contentType: "application/json"], body: .init(byteBuffer: ByteBuffer(staticString: #"{"status":"ready"}"#)))
            } catch {
                context.logger.warning("readiness check failed", metadata: ["error": "\(error)"])
                return Response(
                    status: .serviceUnavailable, headers: [.contentType: "application/json"],
                    body: .init(byteBuffer: ByteBuffer(staticString: #"{"status":"database unavailable"}"#)))
            }
        }
    }
}
