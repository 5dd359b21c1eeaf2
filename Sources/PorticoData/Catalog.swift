import Synchronization

/// The collections of one app at one moment, as the data layer resolves names against them.
public struct Catalog: Sendable {
    public let app: String
    public let collections: [String: CollectionSchema]
    /// The app's database, where these collections' tables are.
    public let database: any Database
    /// Different for every catalog made, so what is derived from one can be kept against it.
    public let version: UInt64

    private static let versions = Atomic<UInt64>(0)

    public init(app: String, collections: [CollectionSchema], database: any Database) {
        self.app = app
        self.database = database
        version = Self.versions.add(1, ordering: .relaxed).newValue
        var byName: [String: CollectionSchema] = [:]
        for collection in collections { byName[collection.name] = collection }
        self.collections = byName
    }

    public var names: [String] { collections.keys.sorted() }

    /// Finds a collection or explains which ones exist.
    public func collection(_ name: String) throws(DataError) -> CollectionSchema {
        if let collection = collections[name] { return collection }
        let known = names
        let hint = known.first { $0.lowercased() == name.lowercased() }.map { " Did you mean '\($0)'?" } ?? ""
        throw .notFound("unknown collection '\(name)' in app '\(app)'.\(hint) Collections: \(known.joined(separator: ", "))")
    }

    /// The collection a relation field points at.
    public func target(of field: Field, in collection: CollectionSchema) throws(DataError) -> CollectionSchema {
        guard let relation = field.relation else {
            throw .invalid("'\(field.name)' of '\(collection.name)' is not a relation")
        }
        return try self.collection(relation.target)
    }
}
