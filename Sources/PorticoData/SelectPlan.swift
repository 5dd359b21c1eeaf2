import Foundation
import PorticoBase
import PorticoJSON
import PorticoStore

/// What a list or get reads: which columns, in what order, and which relations to attach.
struct SelectPlan: Sendable {
    let collection: CollectionSchema
    /// The catalog as the caller may see it: every table this plan reads is read through it.
    let catalog: Catalog
    let outputColumns: [String]
    let order: [SQLFragment]
    let appends: [AppendNode]
    /// `SELECT <columns> FROM <the collection as the caller sees it>`, written once per plan.
    let head: SQLFragment
    /// The two halves of `head`: `SELECT <columns>` and ` FROM <the collection ...>`.
    let columnsPart: SQLFragment
    let fromPart: SQLFragment

    /// Relations deep an append path may go (`tracks.genre.tracks` is three).
    static let maxAppendDepth = 3
    /// Relations one request may append, counting every level.
    static let maxAppendNodes = 20
    /// Sort keys one request may give.
    static let maxSortKeys = 10
    /// Entries of `fields`, `appends`, `except` or `sort`.
    static let maxListLength = 200

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
        self.catalog = catalog
        for (name, list) in [("fields", request.fields), ("appends", request.appends), ("except", request.except), ("sort", request.sort)] {
            guard let list, list.count > Self.maxListLength else { continue }
            throw .invalid("\(name) has \(list.count) entries; at most \(Self.maxListLength)")
        }
        var appendPaths = request.appends ?? []
        var output: [String]
        if let fields = request.fields, !fields.isEmpty {
            output = []
            for name in fields {
                let first = String(name.split(separator: ".").first ?? "")
                guard let field = collection.field(first) else {
                    throw .invalid(
                        "fields: unknown field '\(name)' of '\(collection.name)'; its fields are: \(collection.fields.map(\.name).joined(separator: ", "))")
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
                throw .invalid(
                    "except: unknown field '\(name)' of '\(collection.name)'; its fields are: \(collection.fields.map(\.name).joined(separator: ", "))")
            }
            guard field.isColumn else { throw .invalid("except: '\(name)' is a relation; leave it out of appends instead") }
            output.removeAll { $0 == name }
        }
        outputColumns = output
        for path in appendPaths {
            let depth = path.split(separator: ".").count
            guard depth <= Self.maxAppendDepth else {
                throw .invalid(
                    "appends: '\(path)' goes \(depth) relations deep; at most \(Self.maxAppendDepth) are allowed (like 'tracks.genre.tracks'); ask for the deeper records with a second call"
                )
            }
        }
        appends = try Self.appendTree(appendPaths, collection: collection, catalog: catalog, prefix: "")
        let nodes = Self.count(appends)
        guard nodes <= Self.maxAppendNodes else {
            throw .invalid("appends: \(nodes) relations requested; at most \(Self.maxAppendNodes) per call")
        }
        var fetch = output
        for node in appends {
            let key = node.field.localKey!
            if !fetch.contains(key) { fetch.append(key) }
        }
        order = try Self.order(request.sort ?? [], collection: collection, catalog: catalog, flavor: flavor)
        var columnsPart = SQLFragment("SELECT ")
        columnsPart.append(columns: fetch, of: RecordService.rootAlias)
        var fromPart = SQLFragment(" FROM ")
        fromPart.append(catalog.from(collection, as: RecordService.rootAlias))
        self.columnsPart = columnsPart.compacted()
        self.fromPart = fromPart.compacted()
        var head = columnsPart
        head.append(fromPart)
        self.head = head.compacted()
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
                throw .invalid(
                    "appends: unknown relation '\(prefix)\(head)' of '\(collection.name)'; its relations are: \(collection.relations.map(\.name).joined(separator: ", "))"
                )
            }
            guard field.type.isRelation else {
                throw .invalid(
                    "appends: '\(prefix)\(head)' is a column of '\(collection.name)', not a relation; its relations are: \(collection.relations.map(\.name).joined(separator: ", "))"
                )
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

    static func count(_ nodes: [AppendNode]) -> Int {
        nodes.reduce(nodes.count) { $0 + count($1.children) }
    }

    static func order(_ sort: [String], collection: CollectionSchema, catalog: Catalog, flavor: SQLFlavor) throws(DataError) -> [SQLFragment] {
        var fragments: [SQLFragment] = []
        var used = Set<String>()
        let entries = sort.flatMap { $0.split(separator: ",").map { $0.trimmingSpaces() } }.filter { !$0.isEmpty }
        guard entries.count <= maxSortKeys else { throw .invalid("sort: \(entries.count) keys given; at most \(maxSortKeys)") }
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
                expression = catalog.lookup(path[1], in: target, as: "s", where: r.targetKey, equals: .column(r.foreignKey, of: RecordService.rootAlias))
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
        var q = head
        // Grown once for the rest: the head is the plan's, so the first append copies it anyway.
        q.parts.reserveCapacity(head.parts.count + (condition?.parts.count ?? 0) + order.count * 2 + 6)
        return tail(of: q, where: condition, limit: limit, offset: offset)
    }

    /// `select` with one more column, last: how many rows match in all. The page and its count
    /// are read by one statement, so from one snapshot, and a page past the first needs no
    /// second query. The column has no name of its own; it is read by its position.
    func countedSelect(where condition: SQLFragment?, limit: Int, offset: Int, flavor: SQLFlavor) -> SQLFragment {
        var q = columnsPart
        q.parts.reserveCapacity(columnsPart.parts.count + fromPart.parts.count * 2 + (condition?.parts.count ?? 0) * 2 + order.count * 2 + 10)
        q.append(", (SELECT COUNT(*)")
        q.append(fromPart)
        if let condition {
            q.append(" WHERE ")
            q.append(condition)
        }
        q.append(")")
        q.append(fromPart)
        return tail(of: q, where: condition, limit: limit, offset: offset)
    }

    private func tail(of select: SQLFragment, where condition: SQLFragment?, limit: Int, offset: Int) -> SQLFragment {
        var q = select
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

    /// The records of `rows` with their appends, as many as fit the byte budget. Sizes are
    /// counted as the records are built; appends are fetched only for the records still kept.
    func records(from rows: [Row], meter: ResultMeter) async throws -> RecordResult.Records {
        guard let first = rows.first else { return .objects([]) }
        let layout = RowLayout(first, collection: collection, columns: outputColumns)
        var records = layout.records(rows)
        var sizes = rows.map(layout.size)
        var kept = meter.fitting(sizes)
        for node in appends {
            guard kept > 0 else { break }
            try await attach(node, parentRows: rows[..<kept], records: &records, sizes: &sizes, meter: meter)
            kept = min(kept, meter.fitting(sizes))
        }
        return .objects(Array(records[..<kept]))
    }

    /// The records of `rows`, as many as fit the byte budget, for a plan with no appends (the
    /// common get and list): kept as the rows, to be written straight from them, with no query
    /// to wait for, so no suspension.
    func recordsWithoutAppends(_ rows: [Row], meter: ResultMeter) -> RecordResult.Records {
        guard let first = rows.first else { return .objects([]) }
        let layout = RowLayout(first, collection: collection, columns: outputColumns)
        let kept = meter.fitting(rows.map(layout.size))
        return .rows(kept == rows.count ? rows : Array(rows[..<kept]), layout)
    }

    /// Loads one relation for all parents in one query and attaches it, with the relation's own
    /// appends; each parent's size grows by what it receives.
    func attach(
        _ node: AppendNode, parentRows: ArraySlice<Row>, records: inout [JSONObject], sizes: inout [Int], meter: ResultMeter
    ) async throws {
        try Task.checkCancellation()
        let relation = node.field.relation!
        let parentKey = node.field.localKey!
        var keys: [SQLValue] = []
        var seen = Set<SQLValue>()
        for row in parentRows {
            if let v = row[parentKey], v != .null, seen.insert(v).inserted { keys.append(v) }
        }
        var related: [SQLValue: [(record: JSONObject, size: Int)]] = [:]
        let linkColumn = node.field.type == .belongsTo ? relation.targetKey : (node.field.type == .hasMany ? relation.foreignKey : "__source")
        for start in stride(from: 0, to: keys.count, by: 500) {
            let remaining = meter.remainingAttached
            guard remaining > 0 else {
                meter.cutInAll.insert(node.path)
                break
            }
            let chunk = Array(keys[start..<min(start + 500, keys.count)])
            var rows = try await catalog.database.query(relatedQuery(node, keys: chunk, limit: remaining + 1, perParent: meter.maxPerParent + 1))
            if rows.count > remaining {
                rows.removeLast(rows.count - remaining)
                meter.cutInAll.insert(node.path)
            }
            meter.attach(rows.count)
            var (childRecords, childSizes) = RowMapping.measuredRecords(rows, collection: node.target, columns: node.outputColumns)
            for child in node.children {
                try await attach(child, parentRows: rows[...], records: &childRecords, sizes: &childSizes, meter: meter)
            }
            for (index, row) in rows.enumerated() {
                guard let key = row[linkColumn] else { continue }
                related[key, default: []].append((childRecords[index], childSizes[index]))
            }
        }
        let nameSize = node.field.name.utf8.count + 4
        for (index, row) in zip(records.indices, parentRows) {
            let matches = related[row[parentKey] ?? .null] ?? []
            if node.field.type == .belongsTo {
                records[index][node.field.name] = matches.first.map { .object($0.record) } ?? .null
                sizes[index] += nameSize + (matches.first?.size ?? 4)
            } else {
                if matches.count > meter.maxPerParent { meter.cutPerParent.insert(node.path) }
                let shown = matches.prefix(meter.maxPerParent)
                records[index][node.field.name] = .array(shown.map { .object($0.record) })
                sizes[index] += nameSize + shown.reduce(2) { $0 + $1.size + 1 }
            }
        }
    }

    /// The related rows of `keys`, at most `perParent` per parent (a window over each parent's
    /// rows, in key order) and `limit` in all.
    func relatedQuery(_ node: AppendNode, keys: [SQLValue], limit: Int, perParent: Int) -> SQLFragment {
        let relation = node.field.relation!
        var columns = node.outputColumns
        for child in node.children {
            let key = child.field.localKey!
            if !columns.contains(key) { columns.append(key) }
        }
        let link = node.field.type == .belongsTo ? relation.targetKey : (node.field.type == .hasMany ? relation.foreignKey : relation.targetKey)
        if !columns.contains(link) { columns.append(link) }
        var keyColumn = SQLFragment.column(node.field.type == .belongsTo ? relation.targetKey : relation.foreignKey, of: "r")
        if node.field.type == .belongsToMany { keyColumn = .column(relation.foreignKey, of: "j") }
        var inner = SQLFragment("SELECT ")
        inner.append(columns: columns, of: "r")
        if node.field.type == .belongsToMany {
            inner.append(", ")
            inner.append(column: relation.foreignKey, of: "j")
            inner.append(" AS ")
            inner.append(identifier: "__source")
        }
        let windowed = node.field.type != .belongsTo
        if windowed {
            inner.append(", ROW_NUMBER() OVER (PARTITION BY ")
            inner.append(keyColumn)
            inner.append(" ORDER BY ")
            inner.append(joining: node.target.primaryKey.map { .column($0.name, of: "r") }, separator: ", ")
            if node.target.primaryKey.isEmpty { inner.append("1") }
            inner.append(") AS ")
            inner.append(identifier: "__n")
        }
        inner.append(" FROM ")
        inner.append(catalog.from(node.target, as: "r"))
        if node.field.type == .belongsToMany, let through = relation.through, let otherKey = relation.otherKey {
            inner.append(" JOIN ")
            inner.append(table: through, as: "j")
            inner.append(" ON ")
            inner.append(column: otherKey, of: "j", equals: relation.targetKey, of: "r")
        }
        inner.append(" WHERE ")
        inner.append(keyColumn)
        inner.append(" IN (")
        inner.append(joining: keys.map { .bind($0) }, separator: ", ")
        inner.append(")")
        var q = SQLFragment("SELECT * FROM (")
        q.append(inner)
        q.append(") AS ")
        q.append(identifier: "w")
        if windowed {
            q.append(" WHERE ")
            q.append(column: "__n", of: "w")
            q.append(" <= ")
            q.append(bind: .int(Int64(perParent)))
            q.append(" ORDER BY ")
            q.append(column: node.field.type == .belongsToMany ? "__source" : link, of: "w")
            q.append(", ")
            q.append(column: "__n", of: "w")
        } else if let pk = node.target.primaryKey.first {
            q.append(" ORDER BY ")
            q.append(column: pk.name, of: "w")
        }
        q.append(" LIMIT ")
        q.append(bind: .int(Int64(limit)))
        return q
    }
}
