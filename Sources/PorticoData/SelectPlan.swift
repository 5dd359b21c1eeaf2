import Foundation
import PorticoJSON

/// What a list or get reads: which columns, in what order, and which relations to attach.
final class SelectPlan: @unchecked Sendable {
    // Built once per request and used by that request only.
    let collection: CollectionSchema
    let outputColumns: [String]
    let fetchColumns: [String]
    let order: [SQLFragment]
    let appends: [AppendNode]
    private(set) var truncatedAppends = Set<String>()

    /// A relation to attach to each record, with the columns to show and its own appends.
    struct AppendNode {
        var path: String
        var field: Field
        var target: CollectionSchema
        var columns: [String]?
        var children: [AppendNode]

        var outputColumns: [String] { columns ?? target.columns.map(\.name) }
    }

    init(request: RecordRequest, collection: CollectionSchema, catalog: Catalog, flavor: SQLFlavor) throws(DataError) {
        self.collection = collection
        var appendPaths = request.appends ?? []
        var output: [String]
        if let fields = request.fields, !fields.isEmpty {
            output = []
            for name in fields {
                let first = String(name.split(separator: ".").first ?? "")
                guard let field = collection.field(first) else {
                    throw .invalid("fields: unknown field '\(name)' of '\(collection.name)'; its fields are: \(collection.fields.map(\.name).joined(separator: ", "))")
                }
                if field.isColumn {
                    guard !name.contains(".") else { throw .invalid("fields: '\(first)' is a column of '\(collection.name)', so '\(name)' names nothing") }
                    if !output.contains(name) { output.append(name) }
                } else {
                    appendPaths.append(name)  // NocoBase moves relation fields into appends
                }
            }
        } else {
            output = collection.columns.map(\.name)
        }
        for name in request.except ?? [] {
            guard let field = collection.field(name) else {
                throw .invalid("except: unknown field '\(name)' of '\(collection.name)'; its fields are: \(collection.fields.map(\.name).joined(separator: ", "))")
            }
            guard field.isColumn else { throw .invalid("except: '\(name)' is a relation; leave it out of appends instead") }
            output.removeAll { $0 == name }
        }
        outputColumns = output
        appends = try Self.appendTree(appendPaths, collection: collection, catalog: catalog, prefix: "")
        var fetch = output
        for node in appends {
            let key = node.field.localKey!
            if !fetch.contains(key) { fetch.append(key) }
        }
        fetchColumns = fetch
        order = try Self.order(request.sort ?? [], collection: collection, catalog: catalog, flavor: flavor)
    }

    static func appendTree(_ paths: [String], collection: CollectionSchema, catalog: Catalog, prefix: String) throws(DataError) -> [AppendNode] {
        var nodes: [AppendNode] = []
        var grouped: [(String, [String])] = []
        for path in paths {
            let segments = path.split(separator: ".", maxSplits: 1).map(String.init)
            guard let head = segments.first, !head.isEmpty else { throw .invalid("appends: '\(prefix)\(path)' is not a relation path") }
            if let index = grouped.firstIndex(where: { $0.0 == head }) {
                if segments.count > 1 { grouped[index].1.append(segments[1]) }
            } else {
                grouped.append((head, segments.count > 1 ? [segments[1]] : []))
            }
        }
        for (head, rest) in grouped {
            guard let field = collection.field(head) else {
                throw .invalid("appends: unknown relation '\(prefix)\(head)' of '\(collection.name)'; its relations are: \(collection.relations.map(\.name).joined(separator: ", "))")
            }
            guard field.type.isRelation else {
                throw .invalid("appends: '\(prefix)\(head)' is a column of '\(collection.name)', not a relation; its relations are: \(collection.relations.map(\.name).joined(separator: ", "))")
            }
            let target = try catalog.target(of: field, in: collection)
            var columns: [String]?
            var childPaths: [String] = []
            for sub in rest {
                let first = String(sub.split(separator: ".").first ?? "")
                if let f = target.field(first), f.isColumn, !sub.contains(".") {
                    columns = (columns ?? []) + [first]
                } else {
                    childPaths.append(sub)
                }
            }
            // `tracks` and `tracks.Name` together mean every column.
            if rest.count != childPaths.count + (columns?.count ?? 0) || paths.contains(head) { columns = nil }
            let children = try appendTree(childPaths, collection: target, catalog: catalog, prefix: "\(prefix)\(head).")
            nodes.append(AppendNode(path: prefix + head, field: field, target: target, columns: columns, children: children))
        }
        return nodes
    }

    static func order(_ sort: [String], collection: CollectionSchema, catalog: Catalog, flavor: SQLFlavor) throws(DataError) -> [SQLFragment] {
        var fragments: [SQLFragment] = []
        var used = Set<String>()
        let entries = sort.flatMap { $0.split(separator: ",").map { $0.trimmingSpaces() } }.filter { !$0.isEmpty }
        for entry in entries {
            let descending = entry.hasPrefix("-")
            let name = descending ? String(entry.dropFirst()) : entry
            let path = name.split(separator: ".").map(String.init)
            var expression: SQLFragment
            if path.count == 1 {
                _ = try collection.column(name, purpose: "sort")
                expression = .column(name, of: RecordService.rootAlias)
                used.insert(name)
            } else if path.count == 2 {
                guard let relation = collection.field(path[0]), relation.type == .belongsTo, let r = relation.relation else {
                    throw .invalid("sort: '\(name)' must be a column or a belongsTo relation's column, like 'artist.Name'")
                }
                let target = try catalog.target(of: relation, in: collection)
                _ = try target.column(path[1], purpose: "sort")
                expression = .lookup(path[1], from: target.tableName, as: "s", where: r.targetKey, equals: .column(r.foreignKey, of: RecordService.rootAlias))
            } else {
                throw .invalid("sort: '\(name)' is too deep; sort by a column or a belongsTo relation's column")
            }
            expression.append(descending ? " DESC" : " ASC")
            expression.append(flavor.nulls(last: true))
            fragments.append(expression)
        }
        // The key breaks ties, so pages are stable.
        for key in collection.primaryKey where !used.contains(key.name) {
            var f = SQLFragment.column(key.name, of: RecordService.rootAlias)
            f.append(" ASC")
            fragments.append(f)
        }
        return fragments
    }

    func select(where condition: SQLFragment?, limit: Int, offset: Int, flavor: SQLFlavor) -> SQLFragment {
        var q = SQLFragment("SELECT ")
        q.append(joining: fetchColumns.map { SQLFragment.column($0, of: RecordService.rootAlias) }, separator: ", ")
        q.append(" FROM ")
        q.append(table: collection.tableName, as: RecordService.rootAlias)
        if let condition {
            q.append(" WHERE ")
            q.append(condition)
        }
        if !order.isEmpty {
            q.append(" ORDER BY ")
            q.append(joining: order, separator: ", ")
        }
        q.append(" LIMIT ")
        q.append(bind: .int(Int64(limit)))
        q.append(" OFFSET ")
        q.append(bind: .int(Int64(offset)))
        return q
    }

    func records(from rows: [Row], catalog: Catalog, service: RecordService, access: RecordAccess) async throws -> [JSONObject] {
        var records = RowMapping.records(rows, collection: collection, columns: outputColumns)
        try await attach(appends, parentRows: rows, records: &records, service: service, access: access)
        return records
    }

    /// Loads each relation for all parents in one query and attaches it.
    func attach(_ nodes: [AppendNode], parentRows: [Row], records: inout [JSONObject], service: RecordService, access: RecordAccess) async throws {
        for node in nodes {
            try access.require(node.target.name, .list)
            let relation = node.field.relation!
            let parentKey = node.field.localKey!
            var keys: [SQLValue] = []
            var seen = Set<SQLValue>()
            for row in parentRows {
                if let v = row[parentKey], v != .null, seen.insert(v).inserted { keys.append(v) }
            }
            var related: [SQLValue: [(Row, JSONObject)]] = [:]
            if !keys.isEmpty {
                for chunk in stride(from: 0, to: keys.count, by: 500).map({ Array(keys[$0..<min($0 + 500, keys.count)]) }) {
                    let rows = try await service.database.query(relatedQuery(node, keys: chunk, catalog: service))
                    var childRecords = RowMapping.records(rows, collection: node.target, columns: node.outputColumns)
                    try await attach(node.children, parentRows: rows, records: &childRecords, service: service, access: access)
                    let linkColumn = node.field.type == .belongsTo ? relation.targetKey : (node.field.type == .hasMany ? relation.foreignKey : "__source")
                    for (row, record) in zip(rows, childRecords) {
                        guard let key = row[linkColumn] else { continue }
                        related[key, default: []].append((row, record))
                    }
                }
            }
            for index in records.indices {
                let key = parentRows[index][parentKey] ?? .null
                let matches = related[key] ?? []
                if node.field.type == .belongsTo {
                    records[index][node.field.name] = matches.first.map { .object($0.1) } ?? .null
                } else {
                    if matches.count > service.budget.maxAppendedRows { truncatedAppends.insert(node.path) }
                    records[index][node.field.name] = .array(matches.prefix(service.budget.maxAppendedRows).map { .object($0.1) })
                }
            }
        }
    }

    func relatedQuery(_ node: AppendNode, keys: [SQLValue], catalog service: RecordService) throws -> SQLFragment {
        let relation = node.field.relation!
        var columns = node.outputColumns
        for child in node.children {
            let key = child.field.localKey!
            if !columns.contains(key) { columns.append(key) }
        }
        let link = node.field.type == .belongsTo ? relation.targetKey : (node.field.type == .hasMany ? relation.foreignKey : relation.targetKey)
        if !columns.contains(link) { columns.append(link) }
        var q = SQLFragment("SELECT ")
        q.append(joining: columns.map { SQLFragment.column($0, of: "r") }, separator: ", ")
        if node.field.type == .belongsToMany {
            q.append(", ")
            q.append(column: relation.foreignKey, of: "j")
            q.append(" AS ")
            q.append(identifier: "__source")
        }
        q.append(" FROM ")
        q.append(table: node.target.tableName, as: "r")
        var keyColumn = SQLFragment.column(node.field.type == .belongsTo ? relation.targetKey : relation.foreignKey, of: "r")
        if node.field.type == .belongsToMany, let through = relation.through, let otherKey = relation.otherKey {
            q.append(" JOIN ")
            q.append(table: through, as: "j")
            q.append(" ON ")
            q.append(column: otherKey, of: "j", equals: relation.targetKey, of: "r")
            keyColumn = .column(relation.foreignKey, of: "j")
        }
        q.append(" WHERE ")
        q.append(keyColumn)
        q.append(" IN (")
        q.append(joining: keys.map { .bind($0) }, separator: ", ")
        q.append(")")
        if let pk = node.target.primaryKey.first {
            q.append(" ORDER BY ")
            q.append(column: pk.name, of: "r")
        }
        return q
    }
}
