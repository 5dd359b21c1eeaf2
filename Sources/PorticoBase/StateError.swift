/// A state Portico should never be in: stored data it cannot read, a key or resource that should
/// exist and does not. Not the caller's mistake (that is a domain error, such as `DataError`) and
/// not the database's failure to run a statement (`StoreError`), so it is said as neither.
public struct StateError: Error, Sendable, CustomStringConvertible {
    public let message: String

    public init(_ message: String) {
        self.message = message
    }

    public var description: String { message }
}
