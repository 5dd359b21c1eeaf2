import Crypto
import Foundation
import PorticoBase
public import PorticoJSON

/// What a tool asks the client for before it can finish (MCP 2026-07-28's multi round-trip
/// requests): the input requests (`elicitation/create`, …) by key, and the state the tool needs
/// back with the answers. The endpoint seals the state into `requestState`.
public struct InputRequired: Sendable {
    public var requests: JSONObject
    public var state: JSON

    public init(requests: JSONObject, state: JSON) {
        self.requests = requests
        self.state = state
    }
}

/// The client's answers to a tool's input requests, on the retried call: `responses` by the
/// requests' keys, and the tool's state as it sealed it (checked: this tool, these arguments,
/// this caller, not expired).
public struct CallInput: Sendable {
    public let responses: JSONObject
    public let state: JSON
}

/// Seals a tool's state into an opaque `requestState` bound to the tool, a digest of its
/// arguments and the caller, with an expiry, and opens it again only for the same. Sealed is
/// encrypted and authenticated (AES-GCM under a key derived from the instance's session secret):
/// a client can neither read what a tool keeps in it nor change it, and any replica opens it.
extension SessionSigner {
    /// How long a client has to answer.
    static let requestStateLifetime: Int64 = 600

    public func sealState(_ state: JSON, tool: String, arguments: JSONObject, bindingKey: String, now: Int64) -> String {
        let payload: JSON = [
            "t": .string(tool), "a": .string(Self.digest(arguments)), "p": .string(binding(of: bindingKey)),
            "e": .int(now + Self.requestStateLifetime), "s": state,
        ]
        guard let sealed = try? AES.GCM.seal(Array(payload.serializedString.utf8), using: stateKey, authenticating: Self.stateVersion),
            let combined = sealed.combined
        else { preconditionFailure("AES-GCM seals any payload with a 256-bit key and a random nonce") }
        return "s2." + Base64URL.encode(Array(combined))
    }

    /// The format's version, authenticated with each state.
    static let stateVersion = Array("s2".utf8)

    /// The state, or why it cannot be used.
    public func openState(_ text: String, tool: String, arguments: JSONObject, bindingKey: String, now: Int64) -> Result<JSON, StateProblem> {
        guard text.utf8.count < 65_536 else { return .failure(.malformed) }
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 2, parts[0] == "s2", let combined = Base64URL.decode(String(parts[1])),
            let box = try? AES.GCM.SealedBox(combined: combined), let payload = try? AES.GCM.open(box, using: stateKey, authenticating: Self.stateVersion),
            let json = try? JSONParser.parse(Array(payload), maxDepth: 32)
        else { return .failure(.malformed) }
        guard json["t"]?.stringValue == tool, json["a"]?.stringValue == Self.digest(arguments) else { return .failure(.otherRequest) }
        guard json["p"]?.stringValue == binding(of: bindingKey) else { return .failure(.otherCaller) }
        guard let expires = json["e"]?.intValue, now < expires else { return .failure(.expired) }
        return .success(json["s"] ?? .null)
    }

    public enum StateProblem: Error, Sendable {
        case malformed, otherRequest, otherCaller, expired

        public var message: String {
            switch self {
            case .malformed: "requestState is not one this server gave; send the original request again without it"
            case .otherRequest: "requestState belongs to another call (another tool or other arguments); retry the call it came with"
            case .otherCaller: "requestState was given to another caller"
            case .expired: "requestState has expired; send the original request again without it"
            }
        }
    }

    static func digest(_ arguments: JSONObject) -> String {
        Base64URL.encode(Array(SHA256.hash(data: Array(JSON.object(arguments).serializedString.utf8)).prefix(16)))
    }
}
