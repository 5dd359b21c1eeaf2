import ArgumentParser
import PorticoAsk
import PorticoData
import PorticoInstance
import PorticoStore

/// `portico llm add|list|remove`: the OpenAI-compatible chat APIs questions are answered with.
struct LLMCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "llm", abstract: "Manage the LLMs (OpenAI-compatible chat APIs) that answer questions; the first added is the default.",
        subcommands: [Add.self, List.self, Remove.self])

    struct Add: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Add an OpenAI-compatible chat-completions API (OpenAI, DeepSeek, Qwen, Ollama, vLLM, llama.cpp).",
            discussion: """
                Portico sends requests to BASE-URL/chat/completions. The key is never stored: it is read from the environment \
                variable named by --api-key-env each time a question is asked, e.g.
                  portico llm add --name openai --base-url https://api.openai.com/v1 --model gpt-4o-mini --api-key-env OPENAI_API_KEY
                  portico llm add --name local --base-url http://127.0.0.1:11434/v1 --model qwen2.5-coder
                """)
        @OptionGroup var common: CommonOptions
        @Option(help: "A name for it (letters, digits, '.', '-', '_'); callers pick it as their model.") var name: String
        @Option(help: "The API's base URL, e.g. https://api.openai.com/v1.") var baseURL: String
        @Option(help: "The model to ask, e.g. gpt-4o-mini.") var model: String
        @Option(help: "The environment variable that holds the API key (none for a local server).") var apiKeyEnv: String?

        func run() async throws {
            try await common.withLLMs { try await $0.add(LLMProvider(name: name, baseURL: baseURL, model: model, apiKeyEnv: apiKeyEnv)) }
            print("Added LLM \(name) (\(model) at \(baseURL)).")
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List the configured LLMs, the default first.")
        @OptionGroup var common: CommonOptions

        func run() async throws {
            let all = try await common.withLLMs { try await $0.list() }
            if all.isEmpty { print("No LLM is configured; questions are refused until one is added with `portico llm add`.") }
            for provider in all {
                print("\(provider.name)\t\(provider.model)\t\(provider.baseURL)" + (provider.apiKeyEnv.map { "\tkey from $\($0)" } ?? ""))
            }
        }
    }

    struct Remove: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Remove a configured LLM.")
        @OptionGroup var common: CommonOptions
        @Argument(help: "The LLM's name.") var name: String

        func run() async throws {
            let removed = try await common.withLLMs { try await $0.remove(name: name) }
            guard removed else { throw ValidationError("no LLM named '\(name)' is configured") }
            print("Removed LLM \(name).")
        }
    }
}

extension CommonOptions {
    func withLLMs<T>(_ body: (LLMStore) async throws -> T) async throws -> T {
        try await withStores { stores in
            do {
                return try await body(LLMStore(database: stores.database))
            } catch let error as DatasourceError {
                throw ValidationError(error.message)
            }
        }
    }
}
