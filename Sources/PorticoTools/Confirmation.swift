import PorticoAuth
import PorticoData
import PorticoJSON
import PorticoMCP

/// A destructive call asks before it acts, naming what would be lost: with the input-required
/// result in the 2026-07-28 era (its state sealed by the server, so the answer may reach any
/// replica), with `elicitation/create` in the handshake era when the client declared it; a client
/// that can do neither is told what would be lost and how to confirm (`confirm: true`). An app's
/// administrator may turn this off for trusted automation (`portico app confirmations`).
enum Confirmation {
    static let parameter = Param.bool(
        "confirm", "true once the user has agreed to what this destroys (needed only by a client that cannot be asked; others are asked)")

    /// What to answer instead of acting, or `nil` to act: the caller confirmed (`confirm: true`,
    /// or accepted the question), the app does not ask, or nothing would be lost (`loss` gives
    /// `nil`). What would be lost is read only when there is someone to ask.
    static func ask(
        tool: String, confirmed: Bool, context: CallContext, loss: () async throws -> String?
    ) async throws -> ToolResult? {
        guard !confirmed, await context.asksBeforeDestroying(), let loss = try await loss() else { return nil }
        let question = form(loss)
        // The 2026-07-28 era: the call comes back with the answer and the state sealed for it; what
        // would be lost is asked again if it changed meanwhile.
        if let input = context.input, input.state["loss"]?.stringValue == loss {
            return accepted(input.responses["confirm"]) ? nil : declined(loss)
        }
        if context.canElicit {
            return .needsInput(["confirm": ["method": "elicitation/create", "params": question]], state: ["loss": .string(loss)])
        }
        // The handshake era, on this call's stream.
        if let reply = await context.elicit(question) {
            return accepted(reply) ? nil : declined(loss)
        }
        return .error("Nothing was destroyed yet: \(loss) If the user agrees, call \(tool) again with the same arguments and confirm: true.")
    }

    /// The question: what will be lost, and a yes to tick.
    static func form(_ loss: String) -> JSON {
        [
            "mode": "form", "message": .string("\(loss) This cannot be undone. Go ahead?"),
            "requestedSchema": [
                "type": "object",
                "properties": ["confirm": ["type": "boolean", "title": "Destroy it", "description": .string(loss)]],
                "required": ["confirm"],
            ],
        ]
    }

    static func accepted(_ reply: JSON?) -> Bool {
        reply?["action"]?.stringValue == "accept" && reply?["content"]?["confirm"]?.boolValue == true
    }

    static func declined(_ loss: String) -> ToolResult {
        .error("Nothing was destroyed: the user did not confirm. (\(loss))")
    }

    /// "3 records", "1 record".
    static func count(_ n: Int64, _ noun: String) -> String { "\(n) \(noun)\(n == 1 ? "" : "s")" }
}

extension Tool {
    /// A destructive tool of an administration area that asks before it acts (`Confirmation`):
    /// `loss` says what a call would destroy (`nil`: nothing, so nothing to ask), `run` destroys.
    static func destroying(
        _ area: AdminArea, _ resource: Scope.Resource, _ name: String, _ description: String, _ parameters: [any DeclaredParameter],
        output: JSON = ["type": "object"], idempotent: Bool = false, loss: @escaping @Sendable (ToolInput, CallContext) async throws -> String?,
        run: @escaping @Sendable (ToolInput, CallContext) async throws -> ToolResult
    ) -> Tool {
        var tool = Tool.admin(
            area, resource, name, description + " The user is asked first.", parameters + [Confirmation.parameter], output: output,
            change: ToolAnnotations(readOnly: false, destructive: true, idempotent: idempotent)
        ) { input, context in
            let confirmed = try input[Confirmation.parameter] == true
            if let asked = try await Confirmation.ask(tool: name, confirmed: confirmed, context: context, loss: { try await loss(input, context) }) {
                return asked
            }
            return try await run(input, context)
        }
        tool.asksBack = true
        return tool
    }
}
