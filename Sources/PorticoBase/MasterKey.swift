public import Crypto
import Foundation

/// The key that seals Portico's own secrets at rest (token signing keys, the session secret).
/// It comes from `PORTICO_MASTER_KEY` (base64, 32 bytes) so replicas can share it, or from
/// `master.key` in the data directory, created with mode 0600 on first start.
public struct MasterKey: Sendable {
    let key: SymmetricKey

    public init(bytes: [UInt8]) {
        key = SymmetricKey(data: bytes)
    }

    public enum LoadError: Error, CustomStringConvertible {
        case malformed(String)

        public var description: String {
            switch self {
            case .malformed(let source): "\(source) must hold 32 bytes in base64 (generate one with: head -c 32 /dev/urandom | base64)"
            }
        }
    }

    /// The configured key, or the data directory's key file, created when missing.
    public static func load(environment value: String?, dataDirectory: String) throws -> MasterKey {
        if let value {
            guard let bytes = Data(base64Encoded: value), bytes.count == 32 else { throw LoadError.malformed("PORTICO_MASTER_KEY") }
            return MasterKey(bytes: Array(bytes))
        }
        let url = URL(fileURLWithPath: dataDirectory).appendingPathComponent("master.key")
        if let text = try? String(contentsOf: url, encoding: .utf8) {
            guard let bytes = Data(base64Encoded: text.trimmingSpaces().trimmingCharacters(in: .newlines)), bytes.count == 32 else {
                throw LoadError.malformed(url.path)
            }
            return MasterKey(bytes: Array(bytes))
        }
        let bytes = Secrets.randomBytes(32)
        try FileManager.default.createDirectory(atPath: dataDirectory, withIntermediateDirectories: true)
        _ = FileManager.default.createFile(
            atPath: url.path, contents: Data((Data(bytes).base64EncodedString() + "\n").utf8), attributes: [.posixPermissions: 0o600])
        return MasterKey(bytes: bytes)
    }

    /// AES-GCM sealed, base64; `purpose` is bound in so a value sealed for one use opens for no other.
    public func seal(_ plaintext: [UInt8], purpose: String) throws -> String {
        let box = try AES.GCM.seal(plaintext, using: key, authenticating: Array(purpose.utf8))
        guard let combined = box.combined else { throw LoadError.malformed("sealed value") }
        return combined.base64EncodedString()
    }

    public func open(_ sealed: String, purpose: String) throws -> [UInt8] {
        guard let data = Data(base64Encoded: sealed) else { throw LoadError.malformed("sealed value") }
        let box = try AES.GCM.SealedBox(combined: data)
        return Array(try AES.GCM.open(box, using: key, authenticating: Array(purpose.utf8)))
    }
}

extension MasterKey {
    /// A key for one purpose derived from the master key (HKDF-SHA256), so one secret serves many uses.
    public func derived(_ purpose: String) -> SymmetricKey {
        HKDF<SHA256>.deriveKey(inputKeyMaterial: key, info: Array(purpose.utf8), outputByteCount: 32)
    }
}
