public import PorticoMCP

/// Every tool's human title (MCP `Tool.title`, 2025-11-25), for the people who pick tools in a
/// client's interface: short, in the words of someone who does not know the tool's name.
/// `ToolPackage.presented` refuses to start with a tool that has none.
enum ToolTitles {
    static let byName: [String: String] = [
        // data
        "resource_list": "List records",
        "resource_get": "Get a record",
        "resource_create": "Create a record",
        "resource_update": "Update records",
        "resource_destroy": "Delete records",
        "resource_query": "Summarise records",
        // schema
        "collections_list": "List collections",
        "collections_get": "Show a collection",
        "collections_create": "Create a collection",
        "collections_update": "Rename or describe a collection",
        "collections_destroy": "Delete a collection",
        "fields_create": "Add a field",
        "fields_update": "Change a field",
        "fields_destroy": "Remove a field",
        // users (Casdoor's names)
        "get_users": "List users",
        "get_user": "Get a user",
        "add_user": "Add a user",
        "update_user": "Update a user",
        "delete_user": "Remove a user",
        // applications (Casdoor's names)
        "get_applications": "List OAuth applications",
        "get_application": "Get an OAuth application",
        "add_application": "Register an OAuth application",
        "update_application": "Update an OAuth application",
        "delete_application": "Delete an OAuth application",
        // apikeys
        "api_keys_list": "List my API keys",
        "api_keys_create": "Create an API key",
        "api_keys_revoke": "Revoke an API key",
        // acl
        "roles_list": "List roles",
        "roles_get": "Show a role's permissions",
        "roles_create": "Create a role",
        "roles_update": "Rename a role",
        "roles_destroy": "Delete a role",
        "roles_set_permissions": "Set a role's permissions",
        "users_set_roles": "Set a user's role",
        "app_packages_get": "Show the app's tool packages",
        "app_packages_set": "Choose the app's tool packages",
        "app_confirmations_set": "Ask before destroying, or not",
        "audit_list": "Read the audit trail",
        // ask
        "ask": "Ask a question about the data",
        "datasources_list": "List datasources",
        "datasource_describe": "Describe a datasource's tables",
        "sql_query": "Run a read-only SQL query",
        "sql_explain": "Explain a SQL query's plan",
        "terms_list": "List business terms",
        "terms_create": "Teach a business term",
        "terms_update": "Change a business term",
        "terms_destroy": "Remove a business term",
        "semantic_model_get": "Show the semantic model",
        "query_metric": "Compute business metrics",
        "metrics_create": "Declare a metric",
        "metrics_update": "Change a metric",
        "metrics_destroy": "Remove a metric",
        "dimensions_create": "Declare a dimension",
        "dimensions_update": "Change a dimension",
        "dimensions_destroy": "Remove a dimension",
        "segments_create": "Declare a segment",
        "segments_update": "Change a segment",
        "segments_destroy": "Remove a segment",
        "relationships_create": "Declare a relationship",
        "relationships_destroy": "Remove a relationship",
        "examples_list": "List example questions",
        "examples_create": "Save an example question",
        "examples_destroy": "Remove an example question",
        // workflow
        "workflows_list": "List workflows",
        "workflows_get": "Show a workflow",
        "workflows_create": "Create a workflow",
        "workflows_update": "Change a workflow",
        "workflows_destroy": "Delete a workflow",
        "workflows_trigger": "Run a workflow now",
        "executions_list": "List workflow runs",
        "executions_get": "Show a workflow run",
        "executions_cancel": "Cancel a workflow run",
        // sqlbot (SQLBot's names)
        "mcp_start": "Sign in to SQLBot",
        "access_token": "Get a SQLBot access token",
        "mcp_ws_list": "List workspaces",
        "mcp_datasource_list": "List SQLBot datasources",
        "mcp_model_list": "List language models",
        "get_model_list": "List language models (documented name)",
        "mcp_assistant": "Ask with an assistant",
        "mcp_question": "Ask SQLBot a question",
    ]
}

extension ToolPackage {
    /// The package with the icon `/icons/<package>.svg` under `iconBaseURL` beside each tool.
    public func withIcon(baseURL iconBaseURL: String) -> ToolPackage {
        withIcon(.svg(iconBaseURL + name + ".svg"))
    }
}
