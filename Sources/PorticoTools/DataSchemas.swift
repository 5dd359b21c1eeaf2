import PorticoJSON

/// Input and output schemas of the `data` tools: NocoBase's arguments, kept short because
/// agents pay for every byte of `tools/list`.
enum Schemas {
    static let resource: JSON = ["type": "string", "description": "Collection name, e.g. Album, or association Album.tracks (with sourceId)."]
    static let sourceId: JSON = ["type": ["string", "integer"], "description": "Parent record key for an association resource."]
    static let filterByTk: JSON = ["type": ["string", "integer", "array", "object"], "description": "Primary key value (or array of them)."]
    static let filter: JSON = [
        "type": "object",
        "description":
            "NocoBase filter, e.g. {\"Total\":{\"$gt\":5},\"customer.Country\":\"USA\"}. Ops: $eq $ne $in $notIn $gt $gte $lt $lte $between $includes $notIncludes $startsWith $endWith $empty $notEmpty $isTruly $isFalsy $dateOn $dateBefore $dateAfter $dateBetween; combine with $and/$or.",
    ]
    /// The full operator list is in resource_list only; the other tools point at it (every byte of tools/list costs tokens).
    static let shortFilter: JSON = ["type": "object", "description": "NocoBase filter, as in resource_list."]
    static let strings: JSON = ["type": "array", "items": ["type": "string"]]
    static let dataSource: JSON = ["type": "string", "description": "Only \"main\"."]

    static func object(_ properties: [(String, JSON)], required: [String]) -> JSON {
        var props = JSONObject()
        for (name, schema) in properties { props[name] = schema }
        return ["type": "object", "properties": .object(props), "required": JSON(required), "additionalProperties": false]
    }

    static func described(_ schema: JSON, _ text: String) -> JSON {
        guard case .object(var o) = schema else { return schema }
        o["description"] = .string(text)
        return .object(o)
    }

    static let list = object(
        [
            ("resource", resource), ("dataSource", dataSource), ("sourceId", sourceId), ("filter", filter),
            ("fields", described(strings, "Columns to return; relation names here are appended.")),
            ("appends", described(strings, "Relations to include, e.g. [\"artist\", \"tracks.genre\"].")),
            ("except", described(strings, "Columns to leave out.")),
            ("sort", described(strings, "e.g. [\"-Total\", \"InvoiceDate\"]; - for descending.")),
            ("page", ["type": "integer", "minimum": 1, "maximum": 10_000_000]),
            ("pageSize", ["type": "integer", "minimum": 1, "description": "Default 20."]),
            ("paginate", ["type": "boolean", "description": "false returns all matches, up to 1000."]),
        ], required: ["resource"])

    static let get = object(
        [
            ("resource", resource), ("dataSource", dataSource), ("sourceId", sourceId), ("filterByTk", filterByTk), ("filter", shortFilter),
            ("fields", strings), ("appends", strings), ("except", strings),
        ], required: ["resource"])

    static let values: JSON = ["type": "object", "description": "Field values."]

    static let create = object(
        [
            ("resource", resource), ("dataSource", dataSource), ("sourceId", sourceId), ("values", values),
            ("whitelist", described(strings, "Only these keys of values are written.")),
            ("blacklist", described(strings, "These keys of values are ignored.")),
        ], required: ["resource", "values"])

    static let update = object(
        [
            ("resource", resource), ("dataSource", dataSource), ("sourceId", sourceId), ("filterByTk", filterByTk), ("filter", shortFilter),
            ("values", values), ("whitelist", strings), ("blacklist", strings),
        ], required: ["resource", "values"])

    static let destroy = object(
        [
            ("resource", resource), ("dataSource", dataSource), ("sourceId", sourceId), ("filterByTk", filterByTk), ("filter", shortFilter),
        ], required: ["resource"])

    static let queryField: JSON = ["type": ["string", "array"], "description": "Column, or relation path like customer.Country."]

    static let query = object(
        [
            ("resource", resource), ("dataSource", dataSource),
            (
                "measures",
                [
                    "type": "array",
                    "items": [
                        "type": "object",
                        "properties": [
                            "field": queryField, "aggregation": ["type": "string", "enum": ["sum", "count", "avg", "min", "max"]],
                            "alias": ["type": "string"], "distinct": ["type": "boolean"],
                        ], "required": ["field"],
                    ],
                ]
            ),
            (
                "dimensions",
                [
                    "type": "array",
                    "items": [
                        "type": "object",
                        "properties": [
                            "field": queryField, "alias": ["type": "string"], "format": ["type": "string", "description": "Date format, e.g. YYYY-MM."],
                        ], "required": ["field"],
                    ],
                ]
            ),
            (
                "orders",
                [
                    "type": "array",
                    "items": [
                        "type": "object",
                        "properties": [
                            "field": queryField, "alias": ["type": "string"], "order": ["type": "string", "enum": ["asc", "desc"]],
                            "nulls": ["type": "string", "enum": ["default", "first", "last"]],
                        ],
                    ],
                ]
            ),
            ("filter", shortFilter),
            ("having", ["type": "object", "description": "Conditions on aliases, e.g. {\"total\":{\"$gt\":10}}."]),
            ("limit", ["type": "integer", "minimum": 0]), ("offset", ["type": "integer", "minimum": 0, "maximum": 1_000_000_000_000]),
        ], required: ["resource"])

    static func output(_ data: JSON, meta: Bool = false) -> JSON {
        var properties: JSONObject = ["data": data]
        if meta { properties["meta"] = ["type": "object"] }
        return ["type": "object", "properties": .object(properties), "required": ["data"]]
    }

    static let records: JSON = ["type": "array", "items": ["type": "object"]]
    static let listOutput = output(records, meta: true)
    static let getOutput = output(["type": ["object", "null"]])
    static let createOutput = output(["type": "object"])
    static let updateOutput = output(records, meta: true)
    static let destroyOutput = output(["type": "integer"])
    static let queryOutput = output(records, meta: true)
}
