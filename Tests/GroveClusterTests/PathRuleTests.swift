import Foundation
@testable import GroveCluster
@testable import GroveClient
@testable import GroveCoordinator
@testable import GroveWorker
import Testing

/// The pure judgement of one path's `lstat` facts: who may own it, which bits it may have.
@Suite("PathRule", .timeLimit(.minutes(2)))
struct PathRuleTests {
    static let me: uid_t = 1000
    static let other: uid_t = 65534

    static func facts(_ kind: PathFacts.Kind, owner: uid_t = me, mode: mode_t) -> PathFacts {
        PathFacts(kind: kind, owner: owner, mode: mode)
    }

    @Test func aPrivateDirectoryIsMineWithNothingForOthers() {
        let rule = PathRule.privateDirectory
        #expect(rule.judge(Self.facts(.directory, mode: 0o700), uid: Self.me) == nil)
        #expect(rule.judge(Self.facts(.directory, mode: 0o750), uid: Self.me) == .accessible(0o750))
        #expect(rule.judge(Self.facts(.directory, mode: 0o701), uid: Self.me) == .accessible(0o701))
        #expect(rule.judge(Self.facts(.directory, owner: Self.other, mode: 0o700), uid: Self.me) == .owner(Self.other))
        // Root's is not mine: another user's runtime directory made by root is not adopted.
        #expect(rule.judge(Self.facts(.directory, owner: 0, mode: 0o700), uid: Self.me) == .owner(0))
        #expect(rule.judge(Self.facts(.symlink, mode: 0o777), uid: Self.me) == .symlink)
        #expect(rule.judge(Self.facts(.regular, mode: 0o700), uid: Self.me) == .wrongKind(.regular, expected: .directory))
    }

    @Test func aSocketDirectoryIsMineOrRootsAndWritableByNobodyElse() {
        let rule = PathRule.socketDirectory
        #expect(rule.judge(Self.facts(.directory, mode: 0o755), uid: Self.me) == nil)
        #expect(rule.judge(Self.facts(.directory, owner: 0, mode: 0o755), uid: Self.me) == nil)
        #expect(rule.judge(Self.facts(.directory, owner: Self.other, mode: 0o700), uid: Self.me) == .owner(Self.other))
        #expect(rule.judge(Self.facts(.directory, mode: 0o775), uid: Self.me) == .writable(0o775))
        // A sticky directory (/tmp) still lets others create their own socket in it.
        #expect(rule.judge(Self.facts(.directory, owner: 0, mode: 0o1777), uid: Self.me) == .writable(0o1777))
    }

    @Test func anAncestorMayBeStickyLikeTmp() {
        let rule = PathRule.ancestorDirectory
        #expect(rule.judge(Self.facts(.directory, owner: 0, mode: 0o1777), uid: Self.me) == nil)
        #expect(rule.judge(Self.facts(.directory, owner: 0, mode: 0o777), uid: Self.me) == .writable(0o777))
        #expect(rule.judge(Self.facts(.directory, owner: Self.other, mode: 0o1777), uid: Self.me) == .owner(Self.other))
    }

    @Test func aSocketOrFileIsMineAlone() {
        #expect(PathRule.socket.judge(Self.facts(.socket, mode: 0o777), uid: Self.me) == nil)
        #expect(PathRule.socket.judge(Self.facts(.socket, owner: 0, mode: 0o755), uid: Self.me) == .owner(0))
        #expect(PathRule.socket.judge(Self.facts(.symlink, mode: 0o777), uid: Self.me) == .symlink)
        #expect(PathRule.privateFile.judge(Self.facts(.regular, mode: 0o644), uid: Self.me) == nil)
        #expect(PathRule.privateFile.judge(Self.facts(.regular, owner: Self.other, mode: 0o600), uid: Self.me) == .owner(Self.other))
        #expect(PathRule.privateFile.judge(Self.facts(.symlink, mode: 0o777), uid: Self.me) == .symlink)
    }

    @Test func messagesSayWhatToDo() {
        #expect(PathProblem.accessible(0o755).describe("/x", uid: 0).contains("chmod 700 /x"))
        #expect(PathProblem.writable(0o777).describe("/x", uid: 0).contains("chmod go-w /x"))
        // Sticky, as /tmp: chmod go-w /tmp would break the host; the socket belongs elsewhere.
        let sticky = PathProblem.writable(0o1777).describe("/tmp", uid: 0)
        #expect(sticky.contains("mkdir -m 700") && !sticky.contains("chmod"), "\(sticky)")
        #expect(PathProblem.symlink.describe("/x", uid: 0).contains("rm /x"))
        let owner = PathProblem.owner(65534).describe("/x", uid: 0)
        #expect(owner.contains("uid 65534") && owner.contains("not to you, root (uid 0") && owner.contains("rm -r /x"), "\(owner)")
    }

    @Test func endpointsAreTold() {
        #expect(LocalEndpoint("ipc://@grove/clients") == .abstract(name: "grove/clients"))
        // As the kernel will take it: not standardized (that would resolve links).
        #expect(LocalEndpoint("ipc:///run/g/x/../clients") == .socket(path: "/run/g/x/../clients"))
        #expect(LocalEndpoint("ipc://sockets/clients", currentDirectory: "/home/a") == .socket(path: "/home/a/sockets/clients"))
        #expect(LocalEndpoint("tcp://127.0.0.1:5555") == .other)
        #expect(LocalEndpoint("ipc:///run/g/clients").directory == "/run/g")
    }
}
