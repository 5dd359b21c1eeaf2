public import PorticoStore

/// An app's workflows and their executions, kept in the app's own database beside the collections
/// they act on, so an execution's step and the write it made commit in one transaction.
public enum WorkflowTables {
    public static let names = ["portico_workflows", "portico_executions", "portico_jobs", "portico_workflow_ticks"]

    /// How many times an execution was taken up again after the replica running it died while it
    /// held it (its lease ran out with an owner still named): an execution that kills its replica
    /// is failed after a few, instead of killing every replica that takes it. App main's column
    /// comes by a migration, every other app's database gains it when opened.
    public static let addTakeovers = "ALTER TABLE portico_executions ADD COLUMN takeovers INTEGER NOT NULL DEFAULT 0"

    /// `CREATE TABLE IF NOT EXISTS` for the tables, in `flavor`. Times are milliseconds since 1970.
    public static func create(flavor: SQLFlavor) -> [String] {
        [
            // One row per version: `key` names the workflow across its versions, `current` marks
            // the one that runs; `definition` is {trigger, nodes}. The owner's id and the scopes of
            // the credential that saved it (NULL: not narrowed) are what its executions run as.
            """
            CREATE TABLE IF NOT EXISTS portico_workflows (id \(flavor.autoIncrementPrimaryKey), app TEXT NOT NULL, key TEXT NOT NULL,
              version INTEGER NOT NULL, current INTEGER NOT NULL, title TEXT NOT NULL, enabled INTEGER NOT NULL, trigger_type TEXT NOT NULL,
              definition TEXT NOT NULL, owner_id BIGINT, owner_name TEXT, scopes TEXT, created_at BIGINT NOT NULL, updated_at BIGINT NOT NULL)
            """,
            "CREATE INDEX IF NOT EXISTS portico_workflows_current ON portico_workflows (app, current)",
            // The queue and the record of every run. A runnable execution is queued or running with
            // its lease run out (`lease_until`, also the end of a delay); `lease_owner` is the
            // replica that runs it.
            """
            CREATE TABLE IF NOT EXISTS portico_executions (id \(flavor.autoIncrementPrimaryKey), app TEXT NOT NULL, workflow_id BIGINT NOT NULL,
              workflow_key TEXT NOT NULL, status TEXT NOT NULL, context TEXT NOT NULL, depth INTEGER NOT NULL, lease_owner TEXT,
              lease_until BIGINT NOT NULL, error TEXT, created_at BIGINT NOT NULL, started_at BIGINT, finished_at BIGINT)
            """,
            "CREATE INDEX IF NOT EXISTS portico_executions_runnable ON portico_executions (status, lease_until)",
            "CREATE INDEX IF NOT EXISTS portico_executions_workflow ON portico_executions (workflow_key, id)",
            // One row per node run: written in the transaction of the node's own write, and at most
            // once per execution and node, so no step is run twice with its effects.
            """
            CREATE TABLE IF NOT EXISTS portico_jobs (id \(flavor.autoIncrementPrimaryKey), execution_id BIGINT NOT NULL, node_key TEXT NOT NULL,
              node_type TEXT NOT NULL, status TEXT NOT NULL, result TEXT, created_at BIGINT NOT NULL, UNIQUE (execution_id, node_key))
            """,
            // A scheduled time a workflow was started for, claimed once by whichever replica inserts
            // it first; `subject` tells apart the records of a schedule on a date field.
            """
            CREATE TABLE IF NOT EXISTS portico_workflow_ticks (workflow_id BIGINT NOT NULL, tick_at BIGINT NOT NULL, subject TEXT NOT NULL,
              PRIMARY KEY (workflow_id, tick_at, subject))
            """,
        ]
    }
}
