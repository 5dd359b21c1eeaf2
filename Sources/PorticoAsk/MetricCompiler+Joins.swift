import PorticoAskEngine
import PorticoBase
import PorticoStore

extension MetricCompiler {
    /// A way from rows of one table to the one row of another they point at.
    struct Edge: Sendable, Equatable {
        let from: SemanticDefinition.ColumnReference
        let to: SemanticDefinition.ColumnReference
        /// The declared relationship it comes from (`nil`: the schema's foreign key).
        let declared: SemanticDefinition?

        var described: String { "\(from) → \(to)" }
    }

    /// The ways from many rows to one between the datasource's tables: declared relationships,
    /// and the schema's foreign keys between any two tables no relationship is declared between.
    /// A one-to-one relationship is a way in both directions.
    struct Graph {
        var out: [String: [Edge]] = [:]

        init(model: SemanticModel, tables: [SourceTable], compiler: MetricCompiler) throws(DatasourceError) {
            var declaredPairs = Set<[String]>()
            for relationship in model.all(.relationship) {
                guard case .relationship(let from, let to, let oneToOne) = relationship.body else { continue }
                let a = try compiler.table(from.table)
                let b = try compiler.table(to.table)
                let f = SemanticDefinition.ColumnReference(table: a.name, column: Self.column(from.column, of: a))
                let t = SemanticDefinition.ColumnReference(table: b.name, column: Self.column(to.column, of: b))
                declaredPairs.insert([a.name.lowercased(), b.name.lowercased()])
                out[a.name.lowercased(), default: []].append(Edge(from: f, to: t, declared: relationship))
                if oneToOne {
                    declaredPairs.insert([b.name.lowercased(), a.name.lowercased()])
                    out[b.name.lowercased(), default: []].append(Edge(from: t, to: f, declared: relationship))
                }
            }
            for table in tables {
                for key in table.foreignKeys {
                    guard let target = tables.first(where: { $0.name.lowercased() == key.table.lowercased() }),
                        !declaredPairs.contains([table.name.lowercased(), target.name.lowercased()]),
                        let column = key.targetColumn ?? target.columns.first(where: \.primaryKey)?.name
                    else { continue }
                    out[table.name.lowercased(), default: []].append(
                        Edge(from: .init(table: table.name, column: key.column), to: .init(table: target.name, column: column), declared: nil))
                }
            }
        }

        static func column(_ name: String, of table: SourceTable) -> String {
            table.columns.first { $0.name.lowercased() == name.lowercased() }?.name ?? name
        }

        /// The one shortest way from `root` to `target`, or why there is none.
        func path(from root: String, to target: String, for what: String) throws(DatasourceError) -> [Edge] {
            let start = root.lowercased()
            let goal = target.lowercased()
            if start == goal { return [] }
            var distance = [start: 0]
            var ways = [start: 1]
            var into: [String: [Edge]] = [:]
            var frontier = [start]
            while !frontier.isEmpty, distance[goal] == nil {
                var next: [String] = []
                for node in frontier {
                    for edge in out[node] ?? [] {
                        let to = edge.to.table.lowercased()
                        if distance[to] == nil {
                            distance[to] = distance[node]! + 1
                            next.append(to)
                        }
                        guard distance[to] == distance[node]! + 1 else { continue }
                        ways[to, default: 0] += ways[node] ?? 0
                        into[to, default: []].append(edge)
                    }
                }
                frontier = next
            }
            guard distance[goal] != nil else {
                throw DatasourceError(
                    "\(what) is on \(target), which no relationship leads to from \(root) from many rows to one; joined the other way, each row of "
                        + "\(root) would count once per related row. Declare the relationship with relationships_create, or use a \(root) dimension")
            }
            guard ways[goal] == 1 else {
                let options = (into[goal] ?? []).map(\.described)
                throw DatasourceError(
                    "\(what) is on \(target), which \(root) reaches in more than one way (\(options.joined(separator: "; "))); declare the one meant "
                        + "with relationships_create, which then stands for all ways between those two tables")
            }
            var path: [Edge] = []
            var node = goal
            while node != start, let edge = into[node]?.first {
                path.insert(edge, at: 0)
                node = edge.from.table.lowercased()
            }
            return path
        }
    }

    /// The tables a query joins to its root, each once, in the order they are first needed.
    struct JoinTree {
        let root: String
        var edges: [Edge] = []

        init(root: String) {
            self.root = root
        }

        mutating func add(_ path: [Edge]) throws(DatasourceError) {
            for edge in path {
                if let joined = edges.first(where: { $0.to.table.lowercased() == edge.to.table.lowercased() }) {
                    guard joined == edge else {
                        throw DatasourceError(
                            "\(edge.to.table) would be joined twice, by \(joined.described) and by \(edge.described); ask for these in separate calls")
                    }
                    continue
                }
                edges.append(edge)
            }
        }
    }
}
