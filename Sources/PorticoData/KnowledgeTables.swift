public import PorticoStore

/// What an app teaches its question engines about each datasource, kept in the app's own
/// database beside its collections: terms (a word, its synonyms, and optionally the column,
/// expression or condition it means), question → SQL examples, and free-text instructions.
public enum KnowledgeTables {
    public static let names = ["portico_terms", "portico_examples", "portico_instructions"]

    /// `CREATE TABLE IF NOT EXISTS` for the three tables, in `flavor`.
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
        ]
    }
}
