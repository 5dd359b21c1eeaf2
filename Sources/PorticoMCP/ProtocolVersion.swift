/// The MCP protocol revisions Portico speaks, and which era each belongs to.
public enum ProtocolVersion {
    /// Revisions negotiated with `initialize` and served in sessions.
    public static let handshake = ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"]
    /// Revisions with the stateless per-request `_meta` envelope.
    public static let modern = ["2026-07-28"]
    public static let latestHandshake = "2025-11-25"
    /// What a handshake-era request without a version header is assumed to speak (2025-11-25 transports spec).
    public static let assumedWithoutHeader = "2025-03-26"
    /// Every revision, newest first, as named in `UnsupportedProtocolVersion` errors.
    public static let all = modern.reversed() + handshake.reversed()

    public static func isModern(_ version: String) -> Bool { modern.contains(version) }
    public static func isHandshake(_ version: String) -> Bool { handshake.contains(version) }
    public static func isSupported(_ version: String) -> Bool { isModern(version) || isHandshake(version) }
}

/// The reserved `_meta` keys of the modern envelope.
public enum MetaKey {
    public static let protocolVersion = "io.modelcontextprotocol/protocolVersion"
    public static let clientCapabilities = "io.modelcontextprotocol/clientCapabilities"
    public static let clientInfo = "io.modelcontextprotocol/clientInfo"
    public static let serverInfo = "io.modelcontextprotocol/serverInfo"
    public static let logLevel = "io.modelcontextprotocol/logLevel"
    public static let progressToken = "progressToken"
}
