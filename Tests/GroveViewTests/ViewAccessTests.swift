import GroveCluster
import Testing
@testable import GroveView

/// Who may do what in the live view: tokens bound to a client's grants, without sockets.
@Suite(.timeLimit(.minutes(2)))
struct ViewAccessTests {
    static let random = [UInt8](repeating: 0xAB, count: 16)
    static func viewer(_ roles: Set<Topology.Role>, machines: [String] = []) -> ViewAccess.Viewer {
        ViewAccess.Viewer(grants: [Topology.ClientGrant(key: "keys/app.key", roles: roles, machines: machines)], name: "keys/app.key")
    }

    @Test func aReadOnlyTokenWatchesButCannotSendOrCancel() throws {
        var access = ViewAccess()
        let minted = access.mint(for: Self.viewer([.read]), random: Self.random, now: 0, expiresAt: 60_000)
        let token = try #require(minted)
        #expect(token == String(repeating: "ab", count: 16))
        #expect(access.decide(.watch, token: token, now: 1) == .allowed(Self.viewer([.read])))
        guard case .forbidden(let why) = access.decide(.send(address: "auth"), token: token, now: 1) else {
            Issue.record("a read-only token sent"); return
        }
        #expect(why.contains("send role"))
        guard case .forbidden = access.decide(.cancel(address: "auth"), token: token, now: 1) else {
            Issue.record("a read-only token cancelled"); return
        }
    }

    @Test func sendAndCancelFollowTheGrantsMachines() throws {
        var access = ViewAccess()
        let viewer = ViewAccess.Viewer(grants: [
            Topology.ClientGrant(key: "k", roles: [.read, .send]),
            Topology.ClientGrant(key: "k", roles: [.admin], machines: ["poller*"]),
        ], name: "k")
        let minted = access.mint(for: viewer, random: Self.random, now: 0, expiresAt: nil)
        let token = try #require(minted)
        #expect(access.decide(.send(address: "auth"), token: token, now: 1) == .allowed(viewer))
        #expect(access.decide(.cancel(address: "poller/eu"), token: token, now: 1) == .allowed(viewer))
        guard case .forbidden(let why) = access.decide(.cancel(address: "auth"), token: token, now: 1) else {
            Issue.record("admin beyond its machines"); return
        }
        #expect(why.contains("admin role"))
    }

    @Test func aTokenIsRefusedWhenMissingUnknownOrExpired() throws {
        var access = ViewAccess()
        let minted = access.mint(for: Self.viewer([.read]), random: Self.random, now: 0, expiresAt: 1_000)
        let token = try #require(minted)
        for (given, now) in [(nil, Int64(1)), ("", 1), ("feed", 1), (token, 1_000)] as [(String?, Int64)] {
            guard case .unauthenticated = access.decide(.watch, token: given, now: now) else {
                Issue.record("\(given ?? "nil") at \(now) was let in"); return
            }
        }
        // Its expiry dropped it when the next was made.
        _ = access.mint(for: Self.viewer([.read]), random: [UInt8](repeating: 1, count: 16), now: 2_000, expiresAt: nil)
        guard case .unauthenticated(let why) = access.decide(.watch, token: token, now: 0) else { Issue.record("kept"); return }
        #expect(why.contains("not one this view gave"))
    }

    @Test func aTokenWithoutReadSeesNothing() throws {
        var access = ViewAccess()
        let minted = access.mint(for: Self.viewer([.send]), random: Self.random, now: 0, expiresAt: nil)
        let token = try #require(minted)
        guard case .forbidden(let why) = access.decide(.watch, token: token, now: 0) else { Issue.record("watched"); return }
        #expect(why.contains("no read role"))
    }

    @Test func onlyThisHostsNamesAtThisPortAreServed() {
        #expect(ViewAccess.isLocalHost("127.0.0.1:8420", port: 8420))
        #expect(ViewAccess.isLocalHost("localhost:8420", port: 8420))
        #expect(ViewAccess.isLocalHost("127.1.2.3:8420", port: 8420))
        // DNS rebinding: another site's name that resolves here.
        #expect(!ViewAccess.isLocalHost("evil.example:8420", port: 8420))
        #expect(!ViewAccess.isLocalHost("127.0.0.1:8421", port: 8420))
        #expect(!ViewAccess.isLocalHost("127.0.0.1", port: 8420))
        #expect(!ViewAccess.isLocalHost(nil, port: 8420))
    }
}
