public import PorticoStore

/// What one replica tells every replica sharing its database (PostgreSQL's `NOTIFY`, or within
/// the process on SQLite), through `ChangeSignal.broadcast`: the things that must reach a client
/// or a cache whichever replica holds it. Encoded as text here, and only here.
public enum PeerMessage: Sendable, Hashable {
    /// Cancel the call that runs under this key (a client's `notifications/cancelled` that reached
    /// another replica than the call).
    case cancel(key: String)
    /// A session's log level (`logging/setLevel`), for its later calls on any replica.
    case logLevel(session: String, level: String)
    /// An app's collections changed: its sessions hear `notifications/resources/list_changed`.
    case resourcesChanged(app: String)
    /// A user's rights changed (role, membership, a role's permissions): their sessions hear
    /// `notifications/tools/list_changed`.
    case toolsListChanged(userID: Int64)
    /// A new token signing key was made: every replica loads it.
    case signingKeysRotated
    /// A client's answer (`body`, JSON) to a request a replica sent on a call's stream, keyed
    /// `session|id`: the replica waiting for it takes it.
    case inputResponse(key: String, body: String)
    /// An app's workflows changed (saved, enabled, removed): every replica reloads its triggers.
    case workflowsChanged(app: String)
    /// A session loaded tool packages into its list (`tools_load`): every replica lists them to
    /// it, and tells its stream that the list changed.
    case packagesLoaded(session: String, packages: [String])

    /// The largest answer relayed (PostgreSQL's NOTIFY payload is under 8,000 bytes).
    public static let maxInputResponseBytes = 6000

    /// The message as text, `kind:argument`.
    public var encoded: String {
        switch self {
        case .cancel(let key): "cancel:" + key
        case .logLevel(let session, let level): "log_level:" + session + "=" + level
        case .resourcesChanged(let app): "resources_changed:" + app
        case .toolsListChanged(let userID): "tools_list_changed:" + String(userID)
        case .signingKeysRotated: "signing_keys_rotated"
        case .inputResponse(let key, let body): "input_response:" + key + " " + body
        case .workflowsChanged(let app): "workflows_changed:" + app
        case .packagesLoaded(let session, let packages): "packages_loaded:" + session + "=" + packages.joined(separator: ",")
        }
    }

    /// The message `encoded` wrote; `nil` for text that is not one (a newer replica's, or noise).
    public init?(encoded text: String) {
        guard let colon = text.firstIndex(of: ":") else {
            guard text == "signing_keys_rotated" else { return nil }
            self = .signingKeysRotated
            return
        }
        let argument = String(text[text.index(after: colon)...])
        switch text[..<colon] {
        case "cancel":
            self = .cancel(key: argument)
        case "log_level":
            guard let equals = argument.lastIndex(of: "=") else { return nil }
            self = .logLevel(session: String(argument[..<equals]), level: String(argument[argument.index(after: equals)...]))
        case "resources_changed":
            self = .resourcesChanged(app: argument)
        case "tools_list_changed":
            guard let userID = Int64(argument) else { return nil }
            self = .toolsListChanged(userID: userID)
        case "workflows_changed":
            self = .workflowsChanged(app: argument)
        case "packages_loaded":
            guard let equals = argument.lastIndex(of: "=") else { return nil }
            let packages = argument[argument.index(after: equals)...].split(separator: ",").map(String.init)
            self = .packagesLoaded(session: String(argument[..<equals]), packages: packages)
        case "input_response":
            guard let space = argument.firstIndex(of: " ") else { return nil }
            self = .inputResponse(key: String(argument[..<space]), body: String(argument[argument.index(after: space)...]))
        default:
            return nil
        }
    }
}

extension ChangeSignal {
    /// Sends `message` to every process that shares the database, this one included; each hears
    /// it through `onMessage`. Used for what must reach a client whichever replica holds its stream.
    public func broadcast(_ message: PeerMessage) {
        broadcast(encoded: message.encoded)
    }

    /// Registers a listener for the messages this version knows (a newer replica's are passed over).
    public func onMessage(_ listener: @escaping @Sendable (PeerMessage) -> Void) {
        onMessage(encoded: { text in
            if let message = PeerMessage(encoded: text) { listener(message) }
        })
    }

    /// A message heard: passed to every listener.
    public func deliver(_ message: PeerMessage) {
        deliver(encoded: message.encoded)
    }
}
