import Crypto
import GroveCluster
import Testing
@testable import GroveView

/// Tokens a client key makes itself (`fsm-send view`) and the view checks with the secret the
/// coordinator's key shares with it, without sockets.
@Suite(.timeLimit(.minutes(2)))
struct KeyTokenTests {
    let coordinator = Curve25519.KeyAgreement.PrivateKey()
    let client = Curve25519.KeyAgreement.PrivateKey()
    var clientPublic: [UInt8] { Array(client.publicKey.rawRepresentation) }
    let reader = ViewAccess.Viewer(grants: [Topology.ClientGrant(key: "keys/reader.key", roles: [.read])], name: "keys/reader.key")

    /// The view's side: the coordinator's secret key and the client's public one.
    func access() throws -> ViewAccess {
        var access = ViewAccess()
        let shared = try KeyToken.sharedSecret(secretKey: Array(coordinator.rawRepresentation), publicKey: clientPublic)
        access.trust(publicKey: clientPublic, shared: shared, as: reader)
        return access
    }

    /// The client's side: its secret key and the coordinator's public one.
    func token(expiresAt: Int64) throws -> String {
        let shared = try KeyToken.sharedSecret(secretKey: Array(client.rawRepresentation),
                                                   publicKey: Array(coordinator.publicKey.rawRepresentation))
        return KeyToken.make(shared: shared, publicKey: clientPublic, expiresAt: expiresAt)
    }

    @Test func aTokenTheKeyMadeActsWithItsGrants() throws {
        let access = try access()
        let token = try token(expiresAt: 3_600)
        #expect(access.decide(.watch, token: token, now: 1_000) == .allowed(reader))
        guard case .forbidden(let why) = access.decide(.send(address: "auth"), token: token, now: 1_000) else {
            Issue.record("a read-only key's token sent"); return
        }
        #expect(why.contains("send role"))
    }

    @Test func aMetricsTokenReadsTheMetricsOnlyWithReadOverEveryMachine() throws {
        let fromClient = try KeyToken.sharedSecret(secretKey: Array(client.rawRepresentation),
                                                   publicKey: Array(coordinator.publicKey.rawRepresentation))
        let fromCoordinator = try KeyToken.sharedSecret(secretKey: Array(coordinator.rawRepresentation), publicKey: clientPublic)
        let metrics = KeyToken.make(shared: fromClient, publicKey: clientPublic, expiresAt: 3_600, for: .metrics)
        func decide(_ grants: [Topology.ClientGrant], _ authorization: String?, now: Int64 = 1_000) -> ScrapeAccess.Decision {
            var access = ScrapeAccess()
            access.trust(publicKey: clientPublic, shared: fromCoordinator, name: "keys/scraper.key", grants: grants)
            return access.decide(authorization: authorization, nowSeconds: now)
        }
        let everything = [Topology.ClientGrant(key: "keys/scraper.key", roles: [.read])]
        #expect(decide(everything, "Bearer " + metrics) == .allowed)
        #expect(decide(everything, "bearer  " + metrics) == .allowed)
        guard case .forbidden(let why) = decide([Topology.ClientGrant(key: "keys/scraper.key", roles: [.read], machines: ["counter*"])],
                                                "Bearer " + metrics) else {
            Issue.record("a key that reads some machines scraped them all"); return
        }
        #expect(why.contains("read role over every machine"))
        // A view token does not open the metrics, nor a metrics token the view.
        let view = KeyToken.make(shared: fromClient, publicKey: clientPublic, expiresAt: 3_600)
        guard case .unauthenticated = decide(everything, "Bearer " + view) else { Issue.record("a view token scraped"); return }
        guard case .unauthenticated = try access().decide(.watch, token: metrics, now: 1_000_000) else {
            Issue.record("a metrics token opened the view"); return
        }
        guard case .unauthenticated = decide(everything, nil) else { Issue.record("no header scraped"); return }
        guard case .unauthenticated = decide(everything, "Basic " + metrics) else { Issue.record("basic scraped"); return }
        guard case .unauthenticated = decide(everything, "Bearer " + metrics, now: 3_600) else { Issue.record("an expired token scraped"); return }
        let long = KeyToken.make(shared: fromClient, publicKey: clientPublic, expiresAt: 1_000 + 31 * 24 * 3600, for: .metrics)
        guard case .unauthenticated = decide(everything, "Bearer " + long) else { Issue.record("a 31-day token scraped"); return }
    }

    @Test func aTokenChangedExpiredOrTooLongIsRefused() throws {
        let access = try access()
        let token = try token(expiresAt: 3_600)
        // Its expiry moved on: the MAC no longer matches.
        let parts = token.split(separator: ".")
        let moved = "\(parts[0]).7200.\(parts[2])"
        for (given, now) in [(moved, Int64(1_000)), (token, 3_600_000), (try self.token(expiresAt: 200_000), 1_000)] {
            guard case .unauthenticated = access.decide(.watch, token: given, now: now) else {
                Issue.record("\(given) at \(now) was let in"); return
            }
        }
        // An expiry the key's holder chose near Int64.max (or below 0): refused, not a trap.
        for expiresAt in [Int64.max, Int64.max / 1000 + 1, Int64.min, -1] {
            guard case .unauthenticated = access.decide(.watch, token: try self.token(expiresAt: expiresAt), now: 1_000) else {
                Issue.record("a token expiring at \(expiresAt) was let in"); return
            }
        }
        // Another key's token, signed with a secret the view does not share.
        let stranger = Curve25519.KeyAgreement.PrivateKey()
        let strangerShared = try KeyToken.sharedSecret(secretKey: Array(stranger.rawRepresentation),
                                                           publicKey: Array(coordinator.publicKey.rawRepresentation))
        let forged = KeyToken.make(shared: strangerShared, publicKey: clientPublic, expiresAt: 3_600)
        guard case .unauthenticated = access.decide(.watch, token: forged, now: 1_000) else { Issue.record("forged token let in"); return }
    }
}
