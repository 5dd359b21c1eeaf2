public import PorticoStore

/// What an app teaches its question engines about each datasource, kept in the app's own
/// database beside its collections: terms (a word, its synonyms, and optionally the column,
/// expression or condition it means), question → SQL examples, free-text instructions, and the
/// semantic layer's definitions (metrics, dimensions, segments, relationships).
public enum KnowledgeTables {
    public static let names = ["portico_terms", "portico_examples", "portico_instructions", "portico_semantic"]

    /// `CREATE TABLE IF NOT EXISTS` for the four tables, in `flavor`.
    public static func create(flavor: SQLFlavor) -> [String] {
        [
            // meaning: NULL (a word with a description only), 'column', 'expression' or 'condition';
            // target_table the table it is about; target the column's name or the SQL text.
            """
            CREATE TABLE IF NOT EXISTS portico_terms (id \(flavor.autoIncrementPrimaryKey), app TEXT NOT NULL, datasource TEXT NOT NULL,
              term TEXT NOT NULL, synonyms TEXT NOT NULL, description TEXT, meaning TEXT, target_table TEXT, target TEXT,
              created_by BIGINT, created_at BIGINT NOT NULL)
            """,
            "CREATE INDEX IF NOT EXISTS portico_terms_datasource ON portico_terms (app, datasource)",
            """
            CREATE TABLE IF NOT EXISTS portico_examples (id \(flavor.autoIncrementPrimaryKey), app TEXT NOT NULL, datasource TEXT NOT NULL,
              question TEXT NOT NULL, sql TEXT NOT NULL, verified_by BIGINT, created_at BIGINT NOT NULL)
            """,
            "CREATE INDEX IF NOT EXISTS portico_examples_datasource ON portico_examples (app, datasource)",
            """
            CREATE TABLE IF NOT EXISTS portico_instructions (app TEXT NOT NULL, datasource TEXT NOT NULL, text TEXT NOT NULL,
              updated_by BIGINT, updated_at BIGINT NOT NULL, PRIMARY KEY (app, datasource))
            """,
        ] + semantic(flavor: flavor)
    }

    /// The semantic layer: one row per definition; kind 'metric', 'dimension', 'segment' or
    /// 'relationship'; definition the rest of it as JSON (table, SQL, synonyms, …).
    public static func semantic(flavor: SQLFlavor) -> [String] {
        [
            """
            CREATE TABLE IF NOT EXISTS portico_semantic (id \(flavor.autoIncrementPrimaryKey), app TEXT NOT NULL, datasource TEXT NOT NULL,
              kind TEXT NOT NULL, name TEXT NOT NULL, definition TEXT NOT NULL, created_by BIGINT, created_at BIGINT NOT NULL,
              updated_at BIGINT NOT NULL)
            """,
            "CREATE INDEX IF NOT EXISTS portico_semantic_datasource ON portico_semantic (app, datasource)",
            // Two administrators saving the same name at once: one of them is refused.
            "CREATE UNIQUE INDEX IF NOT EXISTS portico_semantic_name ON portico_semantic (app, datasource, kind, lower(name))",
        ]
    }
}
