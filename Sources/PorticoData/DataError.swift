/// A problem with a data request that the caller can fix; its message says what and how.
public struct DataError: Error, Sendable, CustomStringConvertible {
    public enum Kind: Sendable {
        case invalidArgument
        case notFound
        case forbidden
        case conflict
    }

    public var kind: Kind
    public var message: String

    public init(_ kind: Kind, _ message: String) {
        self.kind = kind
        self.message = message
    }

    public static func invalid(_ message: String) -> DataError { DataError(.invalidArgument, message) }
    public static func notFound(_ message: String) -> DataError { DataError(.notFound, message) }

    public var description: String { message }
}
