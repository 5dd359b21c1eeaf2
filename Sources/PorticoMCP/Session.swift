import Crypto
import Foundation
import PorticoBase
import PorticoJSON
import Synchronization

/// A handshake-era MCP session. Everything about it travels inside its signed id, so every
/// replica that shares the signing key can serve it without sticky load balancing.
public struct MCPSession: Sendable, Equatable {
    public let nonce: String
    public let protocolVersion: String
    public let app: String
    /// A hash of the credential that opened the session; requests with another credential are refused.
    public let binding: String
    public let issuedAt: Int64
    public let clientCapabilities: ClientCapabilityFlags

    public init(nonce: String, protocolVersion: String, app: String, binding: String, issuedAt: Int64, clientCapabilities: ClientCapabilityFlags) {
        self.nonce = nonce
        self.protocolVersion = protocolVersion
        self.app = app
        self.binding = binding
        self.issuedAt = issuedAt
        self.clientCapabilities = clientCapabilities
    }
}

extension MCPSession {
    /// Whether the session is within its lifetime at `now` (allowing five minutes of clock skew
    /// between replicas at its start).
    func isValid(at now: Int64, lifetime: Int64) -> Bool {
        now >= issuedAt - 300 && now < issuedAt + lifetime
    }
}

/// The client capabilities a session remembers from `initialize`.
public struct ClientCapabilityFlags: OptionSet, Sendable, Hashable {
    public let rawValue: Int
    public init(rawValue: Int) { self.rawValue = rawValue }
    public static let sampling = ClientCapabilityFlags(rawValue: 1)
    public static let elicitation = ClientCapabilityFlags(rawValue: 2)
    public static let roots = ClientCapabilityFlags(rawValue: 4)
    /// The MCP Apps extension (`io.modelcontextprotocol/ui`) with HTML views.
    public static let ui = ClientCapabilityFlags(rawValue: 8)
}

/// Issues and verifies signed session ids (`v1.<payload>.<mac>`, HMAC-SHA256).
public struct SessionSigner: Sendable {
    private let key: SymmetricKey
    /// HMAC keyed once; each id is authenticated by a copy of it.
    private let keyed: HMAC<SHA256>
    /// The key request states are sealed with (AES-GCM): the same secret, another purpose.
    let stateKey: SymmetricKey
    /// How long a session id stays valid after `initialize`.
    public let lifetime: Int64
    /// Binding hashes of the credentials seen lately (a credential makes many requests).
    private let bindings = BindingHashes()
    /// Session ids issued or verified lately, by their exact text.
    private let verified = BoundedCache<String, MCPSession>(limit: 4096)

    public init(secret: [UInt8], lifetime: Int64 = 24 * 3600) {
        key = SymmetricKey(data: SHA256.hash(data: secret + Array("portico.mcp-session".utf8)))
        keyed = HMAC<SHA256>(key: key)
        stateKey = SymmetricKey(data: SHA256.hash(data: secret + Array("portico.request-state".utf8)))
        self.lifetime = lifetime
    }

    public static func bindingHash(_ bindingKey: String) -> String {
        let digest = SHA256.hash(data: Array(bindingKey.utf8))
        return Base64URL.encode(Array(digest.prefix(12)))
    }

    /// `bindingHash`, remembered for the credentials seen lately.
    public func binding(of bindingKey: String) -> String {
        bindings.hash(of: bindingKey)
    }

    private func mac(_ payload: [UInt8]) -> [UInt8] {
        var hmac = keyed
        hmac.update(data: payload)
        return Array(hmac.finalize().prefix(16))
    }

    public func issue(protocolVersion: String, app: String, bindingKey: String, capabilities: ClientCapabilityFlags, now: Int64) -> (
        id: String, session: MCPSession
    ) {
        let session = MCPSession(
            nonce: Base64URL.encode(Secrets.randomBytes(16)), protocolVersion: protocolVersion, app: app,
            binding: binding(of: bindingKey), issuedAt: now, clientCapabilities: capabilities)
        let payload = [
            session.nonce, session.protocolVersion, session.app, String(session.issuedAt), String(session.clientCapabilities.rawValue), session.binding,
        ]
        .joined(separator: "|")
        let payloadBytes = Array(payload.utf8)
        let id = "v1." + Base64URL.encode(payloadBytes) + "." + Base64URL.encode(mac(payloadBytes))
        verified.store(session, for: id)
        return (id, session)
    }

    /// The session an id names, or `nil` when the id is malformed, forged or expired. An id this
    /// replica issued or verified lately is found by its exact bytes, without decoding it and
    /// computing its MAC again (about 18,000 instructions on each request of a session).
    public func verify(_ id: String, now: Int64) -> MCPSession? {
        if let known = verified[id] { return known.isValid(at: now, lifetime: lifetime) ? known : nil }
        guard let session = decode(id), session.isValid(at: now, lifetime: lifetime) else { return nil }
        verified.store(session, for: id)
        return session
    }

    /// Forgets an ended session's id (its end is the ledger's to remember).
    public func forget(_ id: String) {
        verified.remove(id)
    }

    private func decode(_ id: String) -> MCPSession? {
        guard id.utf8.count < 512 else { return nil }
        let parts = id.utf8.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        guard parts.count == 3, parts[0].elementsEqual("v1".utf8),
            let payload = Base64URL.decode(String(decoding: parts[1], as: UTF8.self)),
            let mac = Base64URL.decode(String(decoding: parts[2], as: UTF8.self)), mac.count == 16
        else { return nil }
        guard constantTimeEqual(self.mac(payload), mac) else { return nil }
        let fields = payload.split(separator: UInt8(ascii: "|"), omittingEmptySubsequences: false).map { String(decoding: $0, as: UTF8.self) }
        guard fields.count == 6, let issuedAt = Int64(fields[3]), let caps = Int(fields[4]) else { return nil }
        return MCPSession(
            nonce: fields[0], protocolVersion: fields[1], app: fields[2], binding: fields[5],
            issuedAt: issuedAt, clientCapabilities: ClientCapabilityFlags(rawValue: caps))
    }
}

/// Binding hashes by credential, within a bound.
final class BindingHashes: Sendable {
    private let known = BoundedCache<String, String>(limit: 10_000)

    func hash(of bindingKey: String) -> String {
        if let hash = known[bindingKey] { return hash }
        let hash = SessionSigner.bindingHash(bindingKey)
        known.store(hash, for: bindingKey)
        return hash
    }
}

/// Which sessions have been ended (DELETE). Shared by all replicas through the database; the
/// check on each request is an in-memory lookup.
public protocol SessionLedger: Sendable {
    func isEnded(_ nonce: String) -> Bool
    func end(_ session: MCPSession, expiresAt: Int64) async throws
}
