import Foundation
import PorticoData
public import PorticoStore

/// An OpenAI-compatible chat-completions API Portico can ask for SQL (OpenAI, DeepSeek, Qwen,
/// Ollama, vLLM, llama.cpp): `baseURL/chat/completions` with `model`, its key read from the
/// environment variable `apiKeyEnv` at call time (never stored).
public struct LLMProvider: Sendable, Equatable {
    public let name: String
    public let baseURL: String
    public let model: String
    public let apiKeyEnv: String?

    public init(name: String, baseURL: String, model: String, apiKeyEnv: String?) {
        self.name = name
        self.baseURL = baseURL
        self.model = model
        self.apiKeyEnv = apiKeyEnv
    }

    /// The endpoint the requests go to.
    public var completionsURL: String {
        (baseURL.hasSuffix("/") ? String(baseURL.dropLast()) : baseURL) + "/chat/completions"
    }
}

/// The configured LLM providers, shared by every app; the first added is the default.
public struct LLMStore: Sendable {
    let database: any Database

    public init(database: any Database) { self.database = database }

    public func add(_ provider: LLMProvider) async throws {
        try Self.validate(provider)
        guard try await find(name: provider.name) == nil else {
            throw DatasourceError("an LLM named '\(provider.name)' is already configured; remove it first or choose another name")
        }
        var insert = SQLFragment("INSERT INTO portico_llms (name, base_url, model, api_key_env, created_at) VALUES (")
        insert.append(
            joining: [
                .bind(.text(provider.name)), .bind(.text(provider.baseURL)), .bind(.text(provider.model)),
                .bind(provider.apiKeyEnv.map(SQLValue.text) ?? .null), .bind(.int(Int64(Date().timeIntervalSince1970 * 1000))),
            ], separator: ", ")
        insert.append(")")
        try await database.execute(insert)
    }

    /// In the order they were added: the first is used when a call names none.
    public func list() async throws -> [LLMProvider] {
        try await database.query("SELECT name, base_url, model, api_key_env FROM portico_llms ORDER BY created_at, name").map(Self.provider)
    }

    public func find(name: String) async throws -> LLMProvider? {
        var q = SQLFragment("SELECT name, base_url, model, api_key_env FROM portico_llms WHERE name = ")
        q.append(bind: .text(name))
        return try await database.query(q).first.map(Self.provider)
    }

    /// Whether there was such a provider.
    public func remove(name: String) async throws -> Bool {
        guard try await find(name: name) != nil else { return false }
        var q = SQLFragment("DELETE FROM portico_llms WHERE name = ")
        q.append(bind: .text(name))
        try await database.execute(q)
        return true
    }

    static func provider(_ row: Row) -> LLMProvider {
        LLMProvider(
            name: row.string("name") ?? "", baseURL: row.string("base_url") ?? "", model: row.string("model") ?? "", apiKeyEnv: row.string("api_key_env"))
    }

    static func validate(_ provider: LLMProvider) throws(DatasourceError) {
        let nameOK = provider.name.utf8.allSatisfy { b in
            (b >= 0x61 && b <= 0x7A) || (b >= 0x41 && b <= 0x5A) || (b >= 0x30 && b <= 0x39) || b == 0x5F || b == 0x2D || b == 0x2E
        }
        guard !provider.name.isEmpty, provider.name.utf8.count <= 64, nameOK else {
            throw DatasourceError("an LLM name is 1 to 64 letters, digits, '.', '_' or '-'; got '\(provider.name)'")
        }
        guard provider.name != "builtin" else { throw DatasourceError("'builtin' is the name of the built-in engine; choose another name") }
        guard let url = URLComponents(string: provider.baseURL), ["http", "https"].contains(url.scheme ?? ""), url.host?.isEmpty == false,
            url.query == nil
        else {
            throw DatasourceError("--base-url must be an http(s) URL such as https://api.openai.com/v1 (Portico adds /chat/completions)")
        }
        guard !provider.model.isEmpty, provider.model.utf8.count <= 200 else { throw DatasourceError("--model must name the model, e.g. gpt-4o-mini") }
        if let variable = provider.apiKeyEnv {
            let ok = !variable.isEmpty && variable.utf8.allSatisfy { b in (b >= 0x41 && b <= 0x5A) || (b >= 0x30 && b <= 0x39) || b == 0x5F }
            guard ok else {
                throw DatasourceError("--api-key-env names an environment variable (upper-case letters, digits, '_'), e.g. OPENAI_API_KEY; not the key itself")
            }
        }
    }
}
