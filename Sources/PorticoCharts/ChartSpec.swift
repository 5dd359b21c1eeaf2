/// A chart as SQLBot describes one: its type, title and which columns go on which axis.
public struct ChartSpec: Sendable, Equatable {
    public enum Kind: String, Sendable, CaseIterable {
        /// Horizontal bars (SQLBot's `bar`), vertical bars (`column`), a line, a pie, or no chart.
        case table, bar, column, line, pie
    }

    /// One axis entry: the column's label and its name in the rows.
    public struct Field: Sendable, Equatable {
        public var name: String
        public var value: String
        public init(name: String, value: String) {
            self.name = name
            self.value = value
        }
    }

    public var kind: Kind
    public var title: String
    public var x: Field?
    public var y: [Field]
    public var series: Field?

    public init(kind: Kind, title: String, x: Field? = nil, y: [Field] = [], series: Field? = nil) {
        self.kind = kind
        self.title = title
        self.x = x
        self.y = y
        self.series = series
    }
}

/// What a chart draws: category labels along one axis and one or more named series of numbers.
public struct ChartData: Sendable, Equatable {
    public var categories: [String]
    public var series: [(name: String, values: [Double])]

    public init(categories: [String], series: [(name: String, values: [Double])]) {
        self.categories = categories
        self.series = series
    }

    public static func == (a: ChartData, b: ChartData) -> Bool {
        a.categories == b.categories && a.series.map(\.name) == b.series.map(\.name) && a.series.map(\.values) == b.series.map(\.values)
    }
}
