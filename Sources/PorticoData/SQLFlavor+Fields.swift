public import PorticoStore

/// The SQL for collections' fields that differs between the databases.
extension SQLFlavor {
    /// The column type for a field in `CREATE TABLE`.
    public func columnType(for field: Field) -> String {
        switch (self, field.type) {
        case (.sqlite, .string), (.sqlite, .select): return field.length.map { "NVARCHAR(\($0))" } ?? "TEXT"
        case (.postgres, .string), (.postgres, .select): return field.length.map { "VARCHAR(\($0))" } ?? "TEXT"
        case (_, .text): return "TEXT"
        case (.sqlite, .integer): return "INTEGER"
        case (.postgres, .integer): return "BIGINT"
        case (.sqlite, .float): return "REAL"
        case (.postgres, .float): return "DOUBLE PRECISION"
        case (_, .decimal): return "NUMERIC(\(field.length ?? 18),\(field.scale ?? 2))"
        case (_, .boolean): return "BOOLEAN"
        case (_, .date): return "DATE"
        case (.sqlite, .datetime): return "DATETIME"
        case (.postgres, .datetime): return "TIMESTAMP"
        case (.sqlite, .json): return "TEXT"
        case (.postgres, .json): return "JSONB"
        case (_, .belongsTo), (_, .hasMany), (_, .belongsToMany): return ""
        }
    }

    /// A bound date or timestamp value comparable with a column of `type`.
    public func temporal(_ value: String, type: FieldType) -> SQLFragment {
        switch self {
        case .sqlite:
            return .bind(.text(value))
        case .postgres:
            var f = SQLFragment("CAST(")
            f.append(bind: .text(value))
            f.append(type == .date ? " AS DATE)" : " AS TIMESTAMP)")
            return f
        }
    }

    /// Formats a date/time expression with NocoBase's tokens (`YYYY`, `MM`, `DD`, `hh`, `mm`, `ss`).
    public func formatDate(_ expression: SQLFragment, format: String) throws(DataError) -> SQLFragment {
        var pattern = ""
        var rest = Substring(format)
        let tokens: [(String, String, String)] = [
            ("YYYY", "%Y", "YYYY"), ("MM", "%m", "MM"), ("DD", "%d", "DD"),
            ("hh", "%H", "HH24"), ("HH", "%H", "HH24"), ("mm", "%M", "MI"), ("ss", "%S", "SS"),
        ]
        outer: while !rest.isEmpty {
            for (token, strftime, toChar) in tokens where rest.hasPrefix(token) {
                pattern += self == .sqlite ? strftime : toChar
                rest = rest.dropFirst(token.count)
                continue outer
            }
            let c = rest.removeFirst()
            guard c == "-" || c == ":" || c == " " || c == "/" || c == "." || c == "T" else {
                throw .invalid("unsupported character '\(c)' in date format '\(format)'; use YYYY, MM, DD, hh, mm, ss and - : / . separators")
            }
            pattern.append(c)
        }
        var f = SQLFragment()
        switch self {
        case .sqlite:
            f.append("strftime(")
            f.append(bind: .text(pattern))
            f.append(", ")
            f.append(expression)
            f.append(")")
        case .postgres:
            f.append("to_char(")
            f.append(expression)
            f.append(", ")
            f.append(bind: .text(pattern))
            f.append(")")
        }
        return f
    }
}
