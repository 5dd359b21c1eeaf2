import Foundation
public import PorticoStore

extension Migrator {
    /// Applies Portico's own migrations (`core`).
    public init() {
        self.init(migrations: Migrator.core)
    }

    /// Portico's own tables. Names start with `portico_`, which collections may not use.
    public static let core: [Migration] = [
        Migration(version: 1, name: "core metadata") { flavor in
            let id = flavor.autoIncrementPrimaryKey.replacingOccurrences(of: "INTEGER NOT NULL PRIMARY KEY", with: "INTEGER PRIMARY KEY")
            return [
                "CREATE TABLE portico_settings (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
                """
                CREATE TABLE portico_users (id \(id), name TEXT NOT NULL UNIQUE, email TEXT, password_hash TEXT,
                  created_at BIGINT NOT NULL, disabled BOOLEAN NOT NULL DEFAULT FALSE)
                """,
                "CREATE TABLE portico_apps (name TEXT PRIMARY KEY, title TEXT, created_at BIGINT NOT NULL)",
                """
                CREATE TABLE portico_app_users (app TEXT NOT NULL REFERENCES portico_apps (name) ON DELETE CASCADE,
                  user_id BIGINT NOT NULL REFERENCES portico_users (id) ON DELETE CASCADE, role TEXT NOT NULL,
                  PRIMARY KEY (app, user_id))
                """,
                """
                CREATE TABLE portico_api_keys (id TEXT PRIMARY KEY, user_id BIGINT NOT NULL REFERENCES portico_users (id) ON DELETE CASCADE,
                  name TEXT NOT NULL, secret_hash TEXT NOT NULL, scopes TEXT, created_at BIGINT NOT NULL, expires_at BIGINT,
                  revoked_at BIGINT, last_used_at BIGINT)
                """,
                "CREATE INDEX portico_api_keys_user ON portico_api_keys (user_id)",
                """
                CREATE TABLE portico_collections (app TEXT NOT NULL REFERENCES portico_apps (name) ON DELETE CASCADE, name TEXT NOT NULL,
                  title TEXT, table_name TEXT NOT NULL, created_at BIGINT NOT NULL, PRIMARY KEY (app, name))
                """,
                """
                CREATE TABLE portico_fields (app TEXT NOT NULL, collection TEXT NOT NULL, name TEXT NOT NULL, position INTEGER NOT NULL,
                  definition TEXT NOT NULL, PRIMARY KEY (app, collection, name),
                  FOREIGN KEY (app, collection) REFERENCES portico_collections (app, name) ON DELETE CASCADE)
                """,
                "CREATE TABLE portico_ended_sessions (nonce TEXT PRIMARY KEY, ended_at BIGINT NOT NULL, expires_at BIGINT NOT NULL)",
                "CREATE INDEX portico_ended_sessions_ended ON portico_ended_sessions (ended_at)",
                "INSERT INTO portico_apps (name, title, created_at) VALUES ('main', 'Main', \(Int(Date().timeIntervalSince1970)))",
            ]
        },
        Migration(version: 2, name: "oauth authorization server") { _ in
            [
                // One list of revoked things (ended MCP sessions, token families, single tokens) that every replica mirrors.
                "DROP TABLE portico_ended_sessions",
                "CREATE TABLE portico_revocations (id TEXT PRIMARY KEY, revoked_at BIGINT NOT NULL, expires_at BIGINT NOT NULL)",
                "CREATE INDEX portico_revocations_revoked ON portico_revocations (revoked_at)",
                """
                CREATE TABLE portico_oauth_clients (client_id TEXT PRIMARY KEY, owner TEXT NOT NULL, name TEXT NOT NULL,
                  display_name TEXT, secret_hash TEXT, redirect_uris TEXT NOT NULL, grant_types TEXT NOT NULL, scopes TEXT,
                  ip_allowlist TEXT, auth_method TEXT NOT NULL, kind TEXT NOT NULL, created_by BIGINT, created_at BIGINT NOT NULL,
                  details TEXT NOT NULL, UNIQUE (owner, name))
                """,
                """
                CREATE TABLE portico_oauth_grants (id TEXT PRIMARY KEY, client_id TEXT NOT NULL, user_id BIGINT, app TEXT NOT NULL,
                  scopes TEXT NOT NULL, resource TEXT NOT NULL, created_at BIGINT NOT NULL, last_used_at BIGINT, revoked_at BIGINT)
                """,
                "CREATE INDEX portico_oauth_grants_user ON portico_oauth_grants (user_id)",
                """
                CREATE TABLE portico_oauth_codes (code_hash TEXT PRIMARY KEY, grant_id TEXT NOT NULL, client_id TEXT NOT NULL,
                  redirect_uri TEXT NOT NULL, code_challenge TEXT NOT NULL, expires_at BIGINT NOT NULL, used_at BIGINT)
                """,
                """
                CREATE TABLE portico_oauth_refresh_tokens (token_hash TEXT PRIMARY KEY, grant_id TEXT NOT NULL,
                  created_at BIGINT NOT NULL, expires_at BIGINT NOT NULL, used_at BIGINT)
                """,
                "CREATE INDEX portico_oauth_refresh_tokens_grant ON portico_oauth_refresh_tokens (grant_id)",
                """
                CREATE TABLE portico_signing_keys (kid TEXT PRIMARY KEY, algorithm TEXT NOT NULL, sealed_private_key TEXT NOT NULL,
                  public_jwk TEXT NOT NULL, created_at BIGINT NOT NULL, retired_at BIGINT)
                """,
                """
                CREATE TABLE portico_web_sessions (id_hash TEXT PRIMARY KEY, user_id BIGINT NOT NULL REFERENCES portico_users (id) ON DELETE CASCADE,
                  created_at BIGINT NOT NULL, expires_at BIGINT NOT NULL)
                """,
                "CREATE TABLE portico_login_failures (key TEXT PRIMARY KEY, failures INTEGER NOT NULL, first_at BIGINT NOT NULL, locked_until BIGINT)",
                "CREATE TABLE portico_user_details (user_id BIGINT PRIMARY KEY REFERENCES portico_users (id) ON DELETE CASCADE, display_name TEXT, phone TEXT)",
                // The session secret is now stored sealed with the master key.
                "DELETE FROM portico_settings WHERE key = 'mcp.session_secret'",
            ]
        },
        Migration(version: 3, name: "datasources") { _ in
            [
                // Where an external datasource is (a file path or a PostgreSQL URL with its
                // password) is stored sealed with the master key; `main` is never a row here.
                """
                CREATE TABLE portico_datasources (app TEXT NOT NULL REFERENCES portico_apps (name) ON DELETE CASCADE, name TEXT NOT NULL,
                  kind TEXT NOT NULL, sealed_location TEXT NOT NULL, description TEXT, created_at BIGINT NOT NULL, PRIMARY KEY (app, name))
                """
            ]
        },
        Migration(version: 4, name: "llm providers and chats") { flavor in
            let id = flavor.autoIncrementPrimaryKey.replacingOccurrences(of: "INTEGER NOT NULL PRIMARY KEY", with: "INTEGER PRIMARY KEY")
            return [
                // The key of a provider is never stored: only the name of the environment variable that holds it.
                """
                CREATE TABLE portico_llms (name TEXT PRIMARY KEY, base_url TEXT NOT NULL, model TEXT NOT NULL, api_key_env TEXT,
                  created_at BIGINT NOT NULL)
                """,
                """
                CREATE TABLE portico_chats (id \(id), app TEXT NOT NULL REFERENCES portico_apps (name) ON DELETE CASCADE,
                  user_id BIGINT NOT NULL REFERENCES portico_users (id) ON DELETE CASCADE, datasource TEXT, created_at BIGINT NOT NULL)
                """,
                "CREATE INDEX portico_chats_user ON portico_chats (user_id)",
                """
                CREATE TABLE portico_chat_records (id \(id), chat_id BIGINT NOT NULL REFERENCES portico_chats (id) ON DELETE CASCADE,
                  question TEXT NOT NULL, datasource TEXT, sql TEXT, engine TEXT, outcome TEXT NOT NULL, message TEXT, chart TEXT,
                  created_at BIGINT NOT NULL)
                """,
                "CREATE INDEX portico_chat_records_chat ON portico_chat_records (chat_id)",
            ]
        },
        Migration(version: 5, name: "chart images shared by replicas") { _ in
            [
                // Used on PostgreSQL, where replicas share the database; PNGs as base64 text, kept 24 hours.
                "CREATE TABLE portico_images (name TEXT PRIMARY KEY, png TEXT NOT NULL, created_at BIGINT NOT NULL)",
                "CREATE INDEX portico_images_created ON portico_images (created_at)",
            ]
        },
        Migration(version: 6, name: "custom roles, collection descriptions, audit trail, keys and packages per app") { flavor in
            [
                // Per app: the role's title and its permissions (per collection and action, as JSON).
                """
                CREATE TABLE portico_roles (app TEXT NOT NULL REFERENCES portico_apps (name) ON DELETE CASCADE, name TEXT NOT NULL,
                  title TEXT, permissions TEXT NOT NULL, created_at BIGINT NOT NULL, PRIMARY KEY (app, name))
                """,
                // A collection's description, for collections_list and the schema the engines read.
                "ALTER TABLE portico_collections ADD COLUMN description TEXT",
                // An API key opens the endpoint of one app (keys made before are main's).
                "ALTER TABLE portico_api_keys ADD COLUMN app TEXT NOT NULL DEFAULT 'main'",
                // The packages an app's endpoint may offer, comma-separated; NULL for all.
                "ALTER TABLE portico_apps ADD COLUMN packages TEXT",
            ] + AuditTrail.rowTable(flavor: flavor)
        },
        Migration(version: 7, name: "invitations to apps") { _ in
            [
                // A user of other apps joins an app when they accept its administrator's invitation.
                """
                CREATE TABLE portico_invitations (app TEXT NOT NULL REFERENCES portico_apps (name) ON DELETE CASCADE,
                  user_id BIGINT NOT NULL REFERENCES portico_users (id) ON DELETE CASCADE, role TEXT NOT NULL, invited_by BIGINT,
                  created_at BIGINT NOT NULL, PRIMARY KEY (app, user_id))
                """
            ]
        },
        // App main's terms, examples and instructions; every other app's are in its own database.
        Migration(version: 8, name: "terms, examples and instructions for the question engines") { flavor in
            KnowledgeTables.create(flavor: flavor)
        },
        // The cost above which a PostgreSQL datasource refuses a query before it runs (NULL: none).
        Migration(version: 9, name: "cost limit per datasource") { _ in
            ["ALTER TABLE portico_datasources ADD COLUMN max_cost DOUBLE PRECISION"]
        },
        // The readings an asker chose when asked back, which hold for the chat's next questions.
        Migration(version: 10, name: "choices kept in chats") { _ in
            ["ALTER TABLE portico_chat_records ADD COLUMN choices TEXT"]
        },
        Migration(version: 11, name: "rate limits") { _ in
            [
                "ALTER TABLE portico_api_keys ADD COLUMN rate_per_minute INTEGER",
                "CREATE TABLE portico_rate_counters (scope TEXT NOT NULL, window_start BIGINT NOT NULL, count BIGINT NOT NULL, PRIMARY KEY (scope, window_start))",
            ]
        },
        // App main's workflows and executions; every other app's are in its own database.
        Migration(version: 12, name: "workflows") { flavor in
            WorkflowTables.create(flavor: flavor)
        },
        Migration(version: 13, name: "executions taken over after their replica died") { _ in
            [WorkflowTables.addTakeovers]
        },
        // Dynamic registration is bounded per address and by clients never used, which expire;
        // every client made before counts as used.
        Migration(version: 14, name: "registered clients' use and origin") { _ in
            [
                "ALTER TABLE portico_oauth_clients ADD COLUMN used_at BIGINT",
                "ALTER TABLE portico_oauth_clients ADD COLUMN registered_from TEXT",
                "UPDATE portico_oauth_clients SET used_at = created_at",
                "CREATE INDEX portico_oauth_clients_registered ON portico_oauth_clients (kind, used_at, created_at)",
                // What tells an authorised client from an unused one, looked up for each of them.
                "CREATE INDEX portico_oauth_grants_client ON portico_oauth_grants (client_id)",
            ]
        },
        // App main's tasks (tool calls answered later); every other app's are in its own database.
        Migration(version: 15, name: "tasks") { _ in
            TaskRecords.create
        },
        // App main's audit trail kept as batches of records, a row each, instead of a row per call.
        Migration(version: 16, name: "audit trail in batches") { flavor in
            AuditTrail.createTable(flavor: flavor) + AuditTrail.batchesFromRows(flavor: flavor)
        },
        // Which process wrote a revocation, so a replica reading the others' skips its own.
        Migration(version: 17, name: "revocations' origin") { _ in
            ["ALTER TABLE portico_revocations ADD COLUMN origin TEXT"]
        },
        // App main's semantic layer; every other app's is in its own database.
        Migration(version: 18, name: "semantic layer") { flavor in
            KnowledgeTables.semantic(flavor: flavor)
        },
        // Ended MCP sessions as a row per flush of a replica, not a row per session; the rows of
        // sessions already ended move into batches of one origin and minute each.
        Migration(version: 19, name: "ended sessions in batches") { flavor in
            endedSessionBatches(flavor: flavor) + endedSessionsFromRows(flavor: flavor)
        },
    ]
}

extension Migrator {
    /// The table of ended MCP sessions, a row per flush of a replica (`RevocationList`).
    static func endedSessionBatches(flavor: SQLFlavor) -> [String] {
        [
            """
            CREATE TABLE portico_ended_session_batches (id \(flavor.autoIncrementPrimaryKey), origin TEXT NOT NULL, revoked_at BIGINT NOT NULL,
              expires_at BIGINT NOT NULL, count INTEGER NOT NULL, sessions TEXT NOT NULL)
            """,
            "CREATE INDEX portico_ended_session_batches_revoked ON portico_ended_session_batches (revoked_at)",
        ]
    }

    /// Moves the ended sessions kept as rows of `portico_revocations` (before batches) into batches
    /// of one origin and minute each, a line per session: its nonce and expiry.
    public static func endedSessionsFromRows(flavor: SQLFlavor) -> [String] {
        let lines =
            switch flavor {
            case .sqlite: "group_concat(substr(id, 9) || ' ' || expires_at, char(10))"
            case .postgres: "string_agg(substr(id, 9) || ' ' || expires_at, E'\\n')"
            }
        // Not a range of ids: under a collation other than C, 'session:…' does not sort below 'session;'.
        let sessions = "substr(id, 1, 8) = 'session:'"
        return [
            """
            INSERT INTO portico_ended_session_batches (origin, revoked_at, expires_at, count, sessions)
              SELECT COALESCE(origin, ''), MAX(revoked_at), MAX(expires_at), COUNT(*), \(lines) FROM portico_revocations
              WHERE \(sessions) GROUP BY COALESCE(origin, ''), revoked_at / 60
            """,
            "DELETE FROM portico_revocations WHERE \(sessions)",
        ]
    }
}
