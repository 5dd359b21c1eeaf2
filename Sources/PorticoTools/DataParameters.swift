import PorticoData
import PorticoJSON
import PorticoMCP

/// The parameters of the `data` tools, NocoBase's arguments, declared once for their schemas and
/// their reading; descriptions kept short because agents pay for every byte of `tools/list`.
enum DataParameters {
    static let resource = Param.string("resource", "Collection name, e.g. Album, or association Album.tracks (with sourceId).")
    static let dataSource = Param.optionalString("dataSource", "Only \"main\".")
    static let sourceId = Param.json(
        "sourceId", schema: ["type": ["string", "integer"], "description": "Parent record key for an association resource."])
    static let filterByTk = Param.json(
        "filterByTk", schema: ["type": ["string", "integer", "array", "object"], "description": "Primary key value (or array of them)."])
    static let filter = Param.json(
        "filter",
        schema: [
            "type": "object",
            "description":
                "NocoBase filter, e.g. {\"Total\":{\"$gt\":5},\"customer.Country\":\"USA\"}. Ops: $eq $ne $in $notIn $gt $gte $lt $lte $between $includes $notIncludes $startsWith $endWith $empty $notEmpty $isTruly $isFalsy $dateOn $dateBefore $dateAfter $dateBetween; combine with $and/$or.",
        ])
    /// The full operator list is in resource_list only; the other tools point at it (every byte of tools/list costs tokens).
    static let shortFilter = Param.json("filter", schema: ["type": "object", "description": "NocoBase filter, as in resource_list."])

    static let listedFields = Param.strings("fields", "Columns to return; relation names here are appended.")
    static let listedAppends = Param.strings("appends", "Relations to include, e.g. [\"artist\", \"tracks.genre\"].")
    static let listedExcept = Param.strings("except", "Columns to leave out.")
    static let fields = Param.strings("fields")
    static let appends = Param.strings("appends")
    static let except = Param.strings("except")
    static let sort = Param.strings("sort", "e.g. [\"-Total\", \"InvoiceDate\"]; - for descending.")
    static let page = Param.int("page", minimum: 1, maximum: 10_000_000)
    static let pageSize = Param.int("pageSize", "Default 20.", minimum: 1)
    static let paginate = Param.bool("paginate", "false returns all matches, up to 1000.")

    static let values = Param.jsonObject("values", "Field values.", required: true)
    static let describedWhitelist = Param.strings("whitelist", "Only these keys of values are written.")
    static let describedBlacklist = Param.strings("blacklist", "These keys of values are ignored.")
    static let whitelist = Param.strings("whitelist")
    static let blacklist = Param.strings("blacklist")

    static let queryField: JSON = ["type": ["string", "array"], "description": "Column, or relation path like customer.Country."]
    static let measures = Param.array(
        "measures",
        items: [
            "type": "object",
            "properties": [
                "field": queryField, "aggregation": ["type": "string", "enum": ["sum", "count", "avg", "min", "max"]], "alias": ["type": "string"],
                "distinct": ["type": "boolean"],
            ], "required": ["field"],
        ])
    static let dimensions = Param.array(
        "dimensions",
        items: [
            "type": "object",
            "properties": ["field": queryField, "alias": ["type": "string"], "format": ["type": "string", "description": "Date format, e.g. YYYY-MM."]],
            "required": ["field"],
        ])
    static let orders = Param.array(
        "orders",
        items: [
            "type": "object",
            "properties": [
                "field": queryField, "alias": ["type": "string"], "order": ["type": "string", "enum": ["asc", "desc"]],
                "nulls": ["type": "string", "enum": ["default", "first", "last"]],
            ],
        ])
    static let having = Param.json("having", schema: ["type": "object", "description": "Conditions on aliases, e.g. {\"total\":{\"$gt\":10}}."])
    static let limit = Param.int("limit", minimum: 0)
    static let offset = Param.int("offset", minimum: 0, maximum: 1_000_000_000_000)

    /// What each data tool declares; `record(_:_:)` and `aggregate(_:)` read exactly these.
    static func declared(for action: RecordAction) -> [any DeclaredParameter] {
        let target: [any DeclaredParameter] = [resource, dataSource, sourceId]
        switch action {
        case .list: return target + [filter, listedFields, listedAppends, listedExcept, sort, page, pageSize, paginate]
        case .get: return target + [filterByTk, shortFilter, fields, appends, except]
        case .create: return target + [values, describedWhitelist, describedBlacklist]
        case .update: return target + [filterByTk, shortFilter, values, whitelist, blacklist]
        case .destroy: return target + [filterByTk, shortFilter, Confirmation.parameter]
        case .query: return [resource, dataSource, measures, dimensions, orders, shortFilter, having, limit, offset]
        }
    }

    /// A record tool's arguments as a request; `action` is the tool's, and only what it declares is read.
    static func record(_ input: ToolInput, _ action: RecordAction) throws -> RecordRequest {
        var r = RecordRequest(resource: try input[resource])
        try requireMain(input)
        r.sourceId = try input[sourceId]
        switch action {
        case .list:
            r.filter = try input[filter]
            r.sort = try input[sort]
            r.page = try input[page]
            r.pageSize = try input[pageSize]
            r.paginate = try input[paginate]
        case .get, .update, .destroy:
            r.filterByTk = try input[filterByTk]
            r.filter = try input[shortFilter]
        case .create, .query: break
        }
        if action == .list || action == .get {
            r.fields = try input[fields]
            r.appends = try input[appends]
            r.except = try input[except]
        }
        if action == .create || action == .update {
            r.values = try input[values]
            r.whitelist = try input[whitelist]
            r.blacklist = try input[blacklist]
        }
        return r
    }

    static func aggregate(_ input: ToolInput) throws -> AggregateRequest {
        var r = AggregateRequest(resource: try input[resource])
        try requireMain(input)
        r.measures = try input[measures]
        r.dimensions = try input[dimensions]
        r.orders = try input[orders]
        r.filter = try input[shortFilter]
        r.having = try input[having]
        r.limit = try input[limit]
        r.offset = try input[offset]
        return r
    }

    static func requireMain(_ input: ToolInput) throws {
        if let name = try input[dataSource], name != "main" {
            throw ToolError("dataSource '\(name)' is not available to the CRUD tools; they work on this app's collections (dataSource \"main\")")
        }
    }

    static func output(_ data: JSON, meta: Bool = false) -> JSON {
        var properties: JSONObject = ["data": data]
        if meta { properties["meta"] = ["type": "object"] }
        return ["type": "object", "properties": .object(properties), "required": ["data"]]
    }

    static let records: JSON = ["type": "array", "items": ["type": "object"]]

    static func output(for action: RecordAction) -> JSON {
        switch action {
        case .list, .update, .query: return output(records, meta: true)
        case .get: return output(["type": ["object", "null"]])
        case .create: return output(["type": "object"])
        case .destroy: return output(["type": "integer"])
        }
    }
}
