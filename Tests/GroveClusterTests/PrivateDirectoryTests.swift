import Foundation
@testable import GroveCluster
@testable import GroveClient
@testable import GroveCoordinator
@testable import GroveWorker
import GroveTestSupport
import Testing

/// Directories and files of the launching user's alone: the runtime directory, the data and
/// audit directories, and the files Grove keeps in them.
@Suite("PrivateDirectory", .timeLimit(.minutes(2)))
struct PrivateDirectoryTests {
    static let isRoot = geteuid() == 0

    static func mode(_ path: String) -> mode_t {
        var status = stat()
        lstat(path, &status)
        return status.st_mode & 0o7777
    }

    @Test func missingDirectoriesAreCreatedForThisUserAlone() throws {
        let base = makePrivateDirectory()
        defer { try? FileManager.default.removeItem(atPath: base) }
        // Whatever the umask, what is created is 0700, no less (and no more).
        let saved = umask(0)
        defer { umask(saved) }
        try PrivateDirectory.prepare(base + "/a/b/c")
        for path in [base + "/a", base + "/a/b", base + "/a/b/c"] { #expect(Self.mode(path) == 0o700, "\(path)") }
        // Again: it is there and fine.
        try PrivateDirectory.prepare(base + "/a/b/c")
    }

    @Test func aDirectoryOpenToOthersIsRefusedNotChanged() throws {
        let base = makePrivateDirectory()
        defer { try? FileManager.default.removeItem(atPath: base) }
        mkdir(base + "/data", 0o700)
        chmod(base + "/data", 0o755)
        let refusal = #expect(throws: PrivateDirectory.Refusal.self) { try PrivateDirectory.prepare(base + "/data") }
        #expect(refusal?.problem == .accessible(0o755))
        #expect(refusal?.description.contains("chmod 700 \(base)/data") == true, "\(String(describing: refusal))")
        #expect(Self.mode(base + "/data") == 0o755)
    }

    @Test func aLinkOrAFileIsRefused() throws {
        let base = makePrivateDirectory()
        defer { try? FileManager.default.removeItem(atPath: base) }
        mkdir(base + "/real", 0o700)
        symlink(base + "/real", base + "/link")
        #expect(throws: PrivateDirectory.Refusal(path: base + "/link", problem: .symlink)) { try PrivateDirectory.prepare(base + "/link") }
        _ = FileManager.default.createFile(atPath: base + "/file", contents: nil)
        #expect(throws: PrivateDirectory.Refusal(path: base + "/file", problem: .wrongKind(.regular, expected: .directory))) {
            try PrivateDirectory.prepare(base + "/file")
        }
    }

    /// Issue 34 (datadir): a directory above the data directory that others may write lets
    /// them swap it; refused before anything is created in it, and by a check too.
    @Test func aDirectoryAboveThatOthersMayWriteIsRefusedAndNothingIsCreated() throws {
        let base = makePrivateDirectory()
        defer { try? FileManager.default.removeItem(atPath: base) }
        mkdir(base + "/open", 0o700)
        chmod(base + "/open", 0o777)
        let wanted = base + "/open/grove-data/dd"
        #expect(throws: PrivateDirectory.Refusal(path: base + "/open", problem: .writable(0o777), below: wanted)) {
            try PrivateDirectory.prepare(wanted)
        }
        #expect(!FileManager.default.fileExists(atPath: base + "/open/grove-data"), "created below a directory others may write")
        #expect(throws: PrivateDirectory.Refusal(path: base + "/open", problem: .writable(0o777), below: wanted)) {
            try PrivateDirectory.check(wanted)
        }
    }

    /// datadir3, as root: nobody's link (in a sticky directory) leading to a directory of
    /// root's that would pass is refused, and nothing is written where it leads.
    @Test(.enabled(if: isRoot, "needs root to give a link to another user"))
    func anotherUsersLinkAboveIsRefused() throws {
        let base = makePrivateDirectory()
        defer { try? FileManager.default.removeItem(atPath: base) }
        mkdir(base + "/shared", 0o700)
        chmod(base + "/shared", 0o1777)
        mkdir(base + "/runtime", 0o700)
        symlink(base + "/runtime", base + "/shared/grove-data")
        lchown(base + "/shared/grove-data", 65534, 65534)
        let refusal = #expect(throws: PrivateDirectory.Refusal.self) { try PrivateDirectory.prepare(base + "/shared/grove-data/dd") }
        #expect(refusal?.path == base + "/shared/grove-data" && refusal?.problem == .owner(65534), "\(String(describing: refusal))")
        #expect(!FileManager.default.fileExists(atPath: base + "/runtime/dd"))
        // Root's own link there is followed, and what it leads to checked.
        unlink(base + "/shared/grove-data")
        symlink(base + "/runtime", base + "/shared/grove-data")
        try PrivateDirectory.prepare(base + "/shared/grove-data/dd")
        #expect(FileManager.default.fileExists(atPath: base + "/runtime/dd"))
    }

    /// /tmp as the data directory itself: never `chmod` it, nor remove it.
    @Test func aStickySharedDirectoryIsNotToldToChange() {
        for uid: uid_t in [0, 1000] {
            let problem = PathRule.privateDirectory.judge(PathFacts(kind: .directory, owner: 0, mode: 0o1777), uid: uid)
            let text = problem.map { $0.describe("/tmp", uid: uid) } ?? ""
            #expect(!text.contains("chmod") && !text.contains("rm ") && text.contains("of your own"), "\(text)")
        }
    }

    @Test(.enabled(if: isRoot, "needs root to give a directory to another user"))
    func anotherUsersDirectoryIsRefused() throws {
        let base = makePrivateDirectory()
        defer { try? FileManager.default.removeItem(atPath: base) }
        mkdir(base + "/theirs", 0o700)
        chown(base + "/theirs", 65534, 65534)
        let refusal = #expect(throws: PrivateDirectory.Refusal.self) { try PrivateDirectory.prepare(base + "/theirs") }
        #expect(refusal?.problem == .owner(65534))
    }

    @Test func filesAreOpenedWithoutFollowingALink() throws {
        let base = makePrivateDirectory()
        defer { try? FileManager.default.removeItem(atPath: base) }
        let victim = base + "/victim"
        _ = FileManager.default.createFile(atPath: victim, contents: Data("untouched".utf8))
        symlink(victim, base + "/main.flight")
        do throws(PrivateFile.OpenError) {
            _ = try PrivateFile.open(base + "/main.flight", flags: O_CREAT | O_RDWR)
            Issue.record("a link was opened")
        } catch {
            guard case .refused(let refusal) = error else { Issue.record("\(error)"); return }
            #expect(refusal.problem == .symlink)
        }
        #expect(throws: PrivateDirectory.Refusal(path: base + "/main.flight", problem: .symlink)) { try PrivateFile.check(base + "/main.flight") }
        #expect(try String(contentsOfFile: victim, encoding: .utf8) == "untouched")
        // A new file is made 0600.
        let descriptor = try PrivateFile.open(base + "/main.jsonl", flags: O_CREAT | O_WRONLY)
        close(descriptor)
        #expect(Self.mode(base + "/main.jsonl") == 0o600)
    }

    @Test(.enabled(if: isRoot, "needs root to give a file to another user"))
    func anotherUsersFileIsRefused() throws {
        let base = makePrivateDirectory()
        defer { try? FileManager.default.removeItem(atPath: base) }
        _ = FileManager.default.createFile(atPath: base + "/main.jsonl", contents: nil)
        chown(base + "/main.jsonl", 65534, 65534)
        do throws(PrivateFile.OpenError) {
            _ = try PrivateFile.open(base + "/main.jsonl", flags: O_WRONLY | O_APPEND)
            Issue.record("another user's file was opened")
        } catch {
            guard case .refused(let refusal) = error else { Issue.record("\(error)"); return }
            #expect(refusal.problem == .owner(65534))
        }
    }

    @Test func theStoreTheFlightRecorderAndTheAuditLogRefuseLinks() throws {
        let base = makePrivateDirectory()
        defer { try? FileManager.default.removeItem(atPath: base) }
        let data = base + "/data"
        mkdir(data, 0o700)
        let victim = base + "/victim"
        _ = FileManager.default.createFile(atPath: victim, contents: Data("untouched".utf8))
        for name in ["a.sqlite", "b.sqlite.lock", "c.sqlite-wal", "d.flight", "e.jsonl"] { symlink(victim, data + "/" + name) }

        let store = #expect(throws: StoreError.self) { try SQLiteMachineStore.open(directory: data, worker: "a") }
        #expect(store?.code == .permission && store?.message.contains("symbolic link") == true, "\(String(describing: store))")
        #expect(throws: StoreError.self) { try SQLiteMachineStore.open(directory: data, worker: "b") }
        #expect(throws: StoreError.self) { try SQLiteMachineStore.open(directory: data, worker: "c") }
        let flight = #expect(throws: StoreError.self) { try MappedFlightLog.open(directory: data, worker: "d") }
        #expect(flight?.message.contains("symbolic link") == true, "\(String(describing: flight))")
        let audit = #expect(throws: AuditLogError.self) { try AuditLog(directory: data, worker: "e", sync: false) }
        #expect(audit?.message.contains("symbolic link") == true, "\(String(describing: audit))")
        #expect(try String(contentsOfFile: victim, encoding: .utf8) == "untouched")
    }

    @Test func theStoreAndTheAuditLogRefuseADirectoryOpenToOthers() throws {
        let base = makePrivateDirectory()
        defer { try? FileManager.default.removeItem(atPath: base) }
        mkdir(base + "/data", 0o700)
        chmod(base + "/data", 0o750)
        let store = #expect(throws: StoreError.self) { try SQLiteMachineStore.open(directory: base + "/data", worker: "main") }
        #expect(store?.message.contains("chmod 700") == true && store?.message.contains("durability.directory") == true,
                "\(String(describing: store))")
        let audit = #expect(throws: AuditLogError.self) { try AuditLog(directory: base + "/data", worker: "main", sync: false) }
        #expect(audit?.message.contains("chmod 700") == true && audit?.message.contains("audit.directory") == true,
                "\(String(describing: audit))")
        #expect(!FileManager.default.fileExists(atPath: base + "/data/main.sqlite"))
    }

    @Test func aLaunchIsToldWhatWouldBeRefused() throws {
        let base = makePrivateDirectory()
        defer { try? FileManager.default.removeItem(atPath: base) }
        let json = """
            { "name": "t", "coordinator": { "clients": "ipc:///run/t/c", "workers": "ipc:///run/t/w", "events": "ipc:///run/t/e" },
              "workers": [ { "name": "main", "count": 2 } ],
              "machines": [ { "name": "c", "type": "Counter", "worker": "main", "durability": "state", "audit": true } ] }
            """
        let topology = try Topology(json: Data(json.utf8), source: "t")
        let data = URL(fileURLWithPath: base + "/data"), audit = URL(fileURLWithPath: base + "/audit")
        // Missing: the workers create them.
        #expect(topology.directoryProblems(dataDirectory: data, auditDirectory: audit) == [])
        mkdir(data.path, 0o700)
        mkdir(audit.path, 0o700)
        symlink(base + "/elsewhere", audit.path + "/main-2.jsonl")
        let problems = topology.directoryProblems(dataDirectory: data, auditDirectory: audit)
        #expect(problems.count == 1 && problems[0].hasPrefix("the audit directory: \(audit.path)/main-2.jsonl is a symbolic link"), "\(problems)")
        chmod(data.path, 0o755)
        #expect(topology.directoryProblems(dataDirectory: data, auditDirectory: audit).first?.hasPrefix("the data directory: \(data.path) has mode 0755") == true)
    }
}
