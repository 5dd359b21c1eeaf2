import Crypto
import Foundation
import JWTKit
import PorticoData
import PorticoJSON

extension AuthorizationServer {
    // MARK: Access tokens at the MCP endpoint

    /// Verifies an access token for one MCP endpoint: signature and key, issuer, audience,
    /// lifetime, and that neither it nor its grant was revoked.
    public func verifyAccessToken(_ token: String, resource: String) async -> Result<AccessTokenClaims, TokenRejection> {
        let claims: AccessTokenClaims
        do {
            claims = try await keys.verify(token)
        } catch let error as JWTError where error.errorType == .claimVerificationFailure {
            if error.failedClaim is ExpirationClaim { return .failure(TokenRejection("the access token has expired")) }
            if error.failedClaim is NotBeforeClaim { return .failure(TokenRejection("the access token is not valid yet")) }
            return .failure(TokenRejection("the access token is not valid (\(error.reason ?? "a claim failed"))"))
        } catch {
            return .failure(TokenRejection("the access token is not valid (bad signature, key or format)"))
        }
        guard claims.iss.value == issuer else { return .failure(TokenRejection("the access token was issued by another server")) }
        guard claims.aud.value.contains(resource) else {
            return .failure(TokenRejection("the access token was issued for another resource (\(claims.aud.value.joined(separator: " "))), not \(resource)"))
        }
        if revocations.contains("token:\(claims.jti.value)") { return .failure(TokenRejection("the access token has been revoked")) }
        if let gid = claims.gid, revocations.contains("grant:\(gid)") {
            return .failure(TokenRejection("the authorization behind the access token has been revoked"))
        }
        return .success(claims)
    }

    /// Why a bearer token was refused; safe to show the caller.
    public struct TokenRejection: Error, Sendable, CustomStringConvertible {
        public var description: String
        init(_ description: String) { self.description = description }
    }
}
