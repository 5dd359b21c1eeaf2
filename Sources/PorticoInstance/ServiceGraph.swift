import Foundation
public import Logging
public import PorticoAsk
public import PorticoAuth
public import PorticoBase
public import PorticoData
public import PorticoMCP
import PorticoStore
import PorticoTools
public import PorticoWorkflow

/// The services of one instance, each made by a small named builder over its stores.
/// `PorticoInstance.open` composes them; nothing here speaks HTTP, so the command line and tests
/// build the same pieces the same way.
extension PorticoStores {
    /// The revocation list every replica mirrors, loaded.
    public func revocationList(logger: Logger) async throws -> RevocationList {
        let revocations = RevocationList(database: database, logger: logger, clock: clock)
        try await revocations.refresh()
        return revocations
    }

    /// The token signing keys, loaded, and loaded again on every replica when one rotates them.
    public func tokenKeys(masterKey: MasterKey, maxTokenLifetime: Int64, logger: Logger) async throws -> TokenKeys {
        let keys = TokenKeys(database: database, masterKey: masterKey, logger: logger, maxTokenLifetime: maxTokenLifetime, clock: clock)
        try await keys.refresh()
        database.changes.onMessage { [logger] message in
            guard message == .signingKeysRotated else { return }
            Task {
                do { try await keys.refresh() } catch { logger.warning("could not load the rotated signing keys", metadata: ["error": "\(error)"]) }
            }
        }
        return keys
    }

    /// What signs MCP session ids, with the secret every replica shares.
    public func sessionSigner(masterKey: MasterKey) async throws -> SessionSigner {
        SessionSigner(secret: try await sessionSecret(masterKey: masterKey))
    }

    /// The OAuth 2.1 authorization server of `issuer`, for every app of the instance.
    public func authorizationServer(
        issuer: String, accessTokenLifetime: Int64, registration: AuthorizationServer.Registration = .init(), keys: TokenKeys,
        revocations: RevocationList, metadataFetcher: (any ClientMetadataFetcher)?, logger: Logger
    ) -> AuthorizationServer {
        var configuration = AuthorizationServer.Configuration(issuer: issuer)
        configuration.accessTokenLifetime = accessTokenLifetime
        configuration.registration = registration
        let apps = self.apps
        return AuthorizationServer(
            configuration: configuration, database: database, users: users, keys: keys, revocations: revocations, appNames: { try await apps.names() },
            metadataFetcher: metadataFetcher, logger: logger, clock: clock)
    }

    /// Schema changes that every replica's sessions hear of (`notifications/resources/list_changed`).
    public func schemaService() -> SchemaService {
        let changes = database.changes
        return SchemaService(catalogs: catalogs) { app in changes.broadcast(.resourcesChanged(app: app)) }
    }

    /// The record of every tool call, in each app's database; `nil` when the trail is off (0 days).
    public func auditTrail(retentionDays: Int, logger: Logger) -> AuditTrail? {
        retentionDays > 0 ? AuditTrail(databases: apps.databases, retentionDays: retentionDays, logger: logger) : nil
    }

    /// The workflows, executions and jobs of every app, in each app's database.
    public var workflowStore: WorkflowStore { WorkflowStore(databases: apps.databases, clock: clock) }

    /// The workflows of every app: their engine, hearing every record write from now on, and the
    /// rules the tools and the command line manage them by. The engine runs executions only once
    /// `run()` is called (the server does; the command line drains what it starts).
    public func workflows(
        configuration: WorkflowEngine.Configuration, masterKey: MasterKey?, asker: AskService?, audit: AuditTrail?, logger: Logger
    ) -> WorkflowService {
        let apps = self.apps
        let engine = WorkflowEngine(
            configuration: configuration, store: workflowStore, records: records, users: users, asker: asker,
            audit: audit, appNames: { try await apps.names() }, secrets: HeaderSecrets(masterKey: masterKey), clock: clock, logger: logger)
        engine.observeWrites()
        return WorkflowService(engine: engine, catalogs: catalogs)
    }

    /// The tools of an app's endpoint: every package of `ToolInventory`, in its order, and the
    /// schema resources.
    public func appTools(
        authorizationServer: AuthorizationServer, asker: AskService, schema: SchemaService, workflows: WorkflowService, audit: AuditTrail?,
        imageBaseURL: String, iconBaseURL: String, applicationQuota: Int, pageSize: Int
    ) -> (registry: ToolRegistry, resources: ResourceProvider) {
        let apps = self.apps
        let schemaPackage = SchemaPackage(schema: schema)
        let packages = [
            DataPackage(records: records).package,
            schemaPackage.package,
            UsersPackage(users: users, server: authorizationServer).package,
            ApplicationsPackage(server: authorizationServer, quota: applicationQuota).package,
            APIKeysPackage(keys: apiKeys).package,
            ACLPackage(
                roles: roles, users: users, catalogs: catalogs, audit: audit,
                packages: ACLPackage.AppPackages(
                    offered: { app in try await apps.offeredPackages()[app] ?? nil }, set: { app, names in try await apps.setOfferedPackages(app, names) },
                    setConfirmations: { app, confirms in try await apps.setConfirmsDestroy(app, confirms) })
            ).package,
            AskPackage(asker: asker, imageBaseURL: imageBaseURL).package,
            WorkflowPackage(service: workflows).package,
        ].map { $0.withIcon(baseURL: iconBaseURL) }
        let registry = ToolRegistry(
            packages: ToolInventory.ordered(packages), defaultPackages: ToolInventory.defaults, firstList: ToolInventory.firstList, pageSize: pageSize)
        return (registry, schemaPackage.resources)
    }

    /// An MCP endpoint over `registry` that hears its peers: a cancellation or a session's log
    /// level may reach another replica than the call it names, and a change of resources or of a
    /// user's rights must reach the sessions wherever their streams are.
    public func endpoint(configuration: MCPEndpoint.Configuration, registry: ToolRegistry, signer: SessionSigner, revocations: RevocationList)
        -> MCPEndpoint
    {
        let endpoint = MCPEndpoint(configuration: configuration, registry: registry, signer: signer, ledger: revocations, clock: clock)
        let changes = database.changes
        endpoint.relayToPeers { message in changes.broadcast(message) }
        changes.onMessage { [weak endpoint] message in endpoint?.receivedFromPeer(message) }
        return endpoint
    }
}

/// Ended MCP sessions are entries of the revocation list, so one mechanism serves sessions and tokens.
extension RevocationList: SessionLedger {
    public func isEnded(_ nonce: String) -> Bool {
        contains(Self.sessionPrefix + nonce)
    }

    public func end(_ session: MCPSession, expiresAt: Int64) async throws {
        try await revoke(Self.sessionPrefix + session.nonce, expiresAt: expiresAt)
    }
}
