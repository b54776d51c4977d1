import Foundation
@testable import GroveCluster
@testable import GroveClient
@testable import GroveCoordinator
@testable import GroveWorker
import Testing

/// The walk from `/` down to a data, audit or socket directory, over made-up `lstat` facts:
/// who may change a directory on the way decides what the path leads to.
@Suite("DirectoryChain", .timeLimit(.minutes(2)))
struct DirectoryChainTests {
    static let me: uid_t = 1000
    static let nobody: uid_t = 65534

    /// A made-up file system: facts by path, and where each link leads.
    struct Disk {
        var entries: [String: PathFacts] = [
            "/": PathFacts(kind: .directory, owner: 0, mode: 0o755),
            "/tmp": PathFacts(kind: .directory, owner: 0, mode: 0o1777),
            "/home": PathFacts(kind: .directory, owner: 0, mode: 0o755),
            "/home/me": PathFacts(kind: .directory, owner: me, mode: 0o700),
            "/run": PathFacts(kind: .directory, owner: 0, mode: 0o755),
            "/run/grove": PathFacts(kind: .directory, owner: me, mode: 0o700),
        ]
        var links: [String: String] = [:]

        mutating func directory(_ path: String, owner: uid_t = me, mode: mode_t = 0o700) {
            entries[path] = PathFacts(kind: .directory, owner: owner, mode: mode)
        }

        mutating func link(_ path: String, to target: String, owner: uid_t = me) {
            entries[path] = PathFacts(kind: .symlink, owner: owner, mode: 0o777)
            links[path] = target
        }

        var lookup: DirectoryChain.Lookup {
            let (entries, links) = (entries, links)
            return DirectoryChain.Lookup(facts: { (path: String) throws(PathProblem) in entries[Self.normal(path)] },
                                         readLink: { (path: String) throws(PathProblem) in
                                             guard let target = links[path] else { throw .cannotInspect(errno: ENOENT) }
                                             return target
                                         })
        }

        /// `/a/b/.` is `/a/b` and `/a/b/../c` is `/a/c`, as the kernel sees them (no link
        /// here is followed by `..`).
        static func normal(_ path: String) -> String {
            var parts: [Substring] = []
            for part in path.split(separator: "/") {
                if part == "." { continue }
                if part == ".." { _ = parts.popLast() } else { parts.append(part) }
            }
            return "/" + parts.joined(separator: "/")
        }

        func check(_ path: String, allowMissing: Bool = false) throws(PrivateDirectory.Refusal) -> Bool {
            try DirectoryChain.checkAbove(path, uid: DirectoryChainTests.me, allowMissing: allowMissing, lookup: lookup)
        }
    }

    @Test func myDirectoriesUnderRootsPass() throws {
        var disk = Disk()
        disk.directory("/home/me/topologies", mode: 0o755)
        disk.directory("/home/me/topologies/grove-data")
        #expect(try disk.check("/home/me/topologies/grove-data/orders") == true)
    }

    /// datadir1: the topology file under a sticky directory, where nobody made `grove-data`
    /// before Grove did (mode 0777): the data directory Grove then makes in it is nobody's to swap.
    @Test func anotherUsersDirectoryOnTheWayIsRefusedEvenUnderASticklyOne() {
        var disk = Disk()
        disk.directory("/tmp/shared", owner: 0, mode: 0o1777)
        disk.directory("/tmp/shared/grove-data", owner: Self.nobody, mode: 0o777)
        #expect(throws: PrivateDirectory.Refusal(path: "/tmp/shared/grove-data", problem: .owner(Self.nobody))) {
            try disk.check("/tmp/shared/grove-data/dd")
        }
    }

    /// A sticky directory passes on the way: nobody else may rename or remove our entry in it.
    @Test func myDirectoryInAStickyOnePasses() throws {
        var disk = Disk()
        disk.directory("/tmp/shared", owner: 0, mode: 0o1777)
        disk.directory("/tmp/shared/grove-data")
        #expect(try disk.check("/tmp/shared/grove-data/dd") == true)
    }

    @Test func aDirectoryOthersMayWriteWithoutTheStickyBitIsRefused() {
        var disk = Disk()
        disk.directory("/home/me/open", mode: 0o777)
        #expect(throws: PrivateDirectory.Refusal(path: "/home/me/open", problem: .writable(0o777))) {
            try disk.check("/home/me/open/grove-data")
        }
        disk.directory("/home/me/group", mode: 0o770)
        #expect(throws: PrivateDirectory.Refusal(path: "/home/me/group", problem: .writable(0o770))) {
            try disk.check("/home/me/group/grove-data")
        }
    }

    /// datadir3: nobody puts a link of its own in a sticky directory, to a directory of root's
    /// with mode 0700 (the runtime directory): where it leads would pass, the link does not.
    @Test func anotherUsersLinkOnTheWayIsRefusedWhereverItLeads() {
        var disk = Disk()
        disk.directory("/tmp/shared", owner: 0, mode: 0o1777)
        disk.link("/tmp/shared/grove-data", to: "/run/grove", owner: Self.nobody)
        disk.directory("/run/grove/dd")
        #expect(throws: PrivateDirectory.Refusal(path: "/tmp/shared/grove-data", problem: .owner(Self.nobody))) {
            try disk.check("/tmp/shared/grove-data/dd")
        }
    }

    @Test func myLinkIsFollowedAndWhereItLeadsChecked() throws {
        var disk = Disk()
        disk.link("/home/me/state", to: "/run/grove")
        #expect(try disk.check("/home/me/state/dd") == true)
        // Root's links (/var/run -> /run) pass too.
        disk.link("/home/me/var", to: "/run/grove", owner: 0)
        #expect(try disk.check("/home/me/var/dd") == true)
        // Mine, but leading under nobody's directory: refused there.
        disk.directory("/tmp/theirs", owner: Self.nobody, mode: 0o755)
        disk.directory("/tmp/theirs/data")
        disk.link("/home/me/elsewhere", to: "/tmp/theirs/data")
        #expect(throws: PrivateDirectory.Refusal(path: "/tmp/theirs", problem: .owner(Self.nobody))) {
            try disk.check("/home/me/elsewhere/dd")
        }
    }

    /// My link to a place reached through nobody's link: each link on the way is judged, not
    /// only where they all end up (`realpath` would have hidden nobody's).
    @Test func aLinkInsideALinksTargetIsJudgedToo() {
        var disk = Disk()
        disk.directory("/tmp/shared", owner: 0, mode: 0o1777)
        disk.link("/tmp/shared/x", to: "/run/grove", owner: Self.nobody)
        disk.link("/home/me/state", to: "/tmp/shared/x")
        #expect(throws: PrivateDirectory.Refusal(path: "/tmp/shared/x", problem: .owner(Self.nobody))) {
            try disk.check("/home/me/state/dd")
        }
        // A relative link is read from where it sits.
        disk.link("/home/me/rel", to: "../me/state2")
        disk.directory("/home/me/state2")
        #expect(throws: Never.self) { try disk.check("/home/me/rel/dd") }
    }

    @Test func aLinkThatLeadsToItselfEnds() {
        var disk = Disk()
        disk.link("/home/me/loop", to: "/home/me/loop")
        #expect(throws: PrivateDirectory.Refusal.self) { try disk.check("/home/me/loop/dd") }
    }

    @Test func whatIsMissingIsToBeCreatedOrRefused() throws {
        let disk = Disk()
        #expect(try disk.check("/home/me/new/grove-data/dd", allowMissing: true) == false)
        #expect(throws: PrivateDirectory.Refusal(path: "/home/me/new", problem: .missing)) {
            try disk.check("/home/me/new/grove-data/dd")
        }
    }

    @Test func theRefusalNamesTheDirectoryWanted() {
        let refusal = PrivateDirectory.Refusal(path: "/tmp/s/grove-data", problem: .owner(Self.nobody), below: "/tmp/s/grove-data/dd")
        #expect(refusal.description.hasPrefix("/tmp/s/grove-data, on the way to /tmp/s/grove-data/dd, cannot be trusted: "
                                                  + "/tmp/s/grove-data belongs to nobody (uid 65534)"), "\(refusal)")
        #expect(refusal.description.contains("rm -r /tmp/s/grove-data"), "\(refusal)")
    }
}
