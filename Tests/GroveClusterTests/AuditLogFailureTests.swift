import Foundation
@testable import GroveCluster
@testable import GroveClient
@testable import GroveCoordinator
@testable import GroveWorker
import GroveTestSupport
import GroveWire
import Testing

/// How the audit log fails: a directory or file it cannot use is refused when it opens
/// (``AuditLogError/Code/cannotOpen``, which the worker turns into exit 78 at its welcome), and
/// a write the file does not take is thrown (``AuditLogError/Code/cannotWrite``, exit 74 before
/// the turn's replies leave). Each error names the file and says what to do: its message is what
/// the worker says as it exits.
@Suite("Audit log failures", .timeLimit(.minutes(2)))
struct AuditLogFailureTests {
    static let isRoot = geteuid() == 0

    /// Makes writes to the open file at `path` go to `replacement` instead: the descriptor the log
    /// holds is found in `/proc/self/fd` and `replacement` put in its place (`dup2`), as if the
    /// disk under it filled (`/dev/full`) or it could not be synced (a pipe).
    static func redirect(_ path: String, to replacement: Int32) throws {
        let descriptors = try FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").compactMap(Int32.init)
        let held = descriptors.filter { (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\($0)")) == path }
        try #require(held.count == 1, "the log holds one descriptor on \(path): \(held)")
        try #require(dup2(replacement, held[0]) == held[0])
    }

    static func full() throws -> Int32 {
        let descriptor = open("/dev/full", O_WRONLY | O_CLOEXEC)
        try #require(descriptor >= 0, "/dev/full: \(String(cString: strerror(errno)))")
        return descriptor
    }

    @Test func aFullDiskIsThrownNamingTheFile() throws {
        let directory = makePrivateDirectory("grove-audit")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let log = try AuditLog(directory: directory, worker: "w", sync: false)
        try log.append(Array("{}\n".utf8))
        let full = try Self.full()
        defer { close(full) }
        try Self.redirect(log.path, to: full)
        let error = #expect(throws: AuditLogError.self) { try log.append(Array("{\"second\":1}\n".utf8)) }
        #expect(error?.code == .cannotWrite && error?.path == directory + "/w.jsonl", "\(String(describing: error))")
        #expect(error?.message == "cannot write to the audit log \(directory)/w.jsonl: No space left on device; "
                + "free space or fix its permissions, then restart the worker", "\(String(describing: error))")
        #expect(try String(contentsOfFile: directory + "/w.jsonl", encoding: .utf8) == "{}\n", "the line before stays whole")
    }

    /// `flush: disk`: a line counts as kept once synced; a sync that fails is thrown too.
    @Test func aSyncThatFailsIsThrownNamingTheFile() throws {
        var ends: [Int32] = [0, 0]
        try #require(pipe(&ends) == 0)
        defer { close(ends[0]); close(ends[1]) }
        for sync in [false, true] {
            let directory = makePrivateDirectory("grove-audit")
            defer { try? FileManager.default.removeItem(atPath: directory) }
            let log = try AuditLog(directory: directory, worker: "w", sync: sync)
            // A pipe takes the write and cannot be synced (EINVAL).
            try Self.redirect(log.path, to: ends[1])
            if sync {
                let error = #expect(throws: AuditLogError.self) { try log.append(Array("{}\n".utf8)) }
                #expect(error?.code == .cannotWrite, "\(String(describing: error))")
                #expect(error?.message.hasPrefix("cannot sync the audit log \(directory)/w.jsonl: Invalid argument") == true,
                        "\(String(describing: error))")
            } else {
                #expect(throws: Never.self, "flush: process does not sync") { try log.append(Array("{}\n".utf8)) }
            }
            var buffer = [UInt8](repeating: 0, count: 16)
            #expect(read(ends[0], &buffer, buffer.count) == 3, "the line was handed over before the sync")
        }
    }

    /// What the worker's turn calls: the sink throws the log's error, and the lines it held are
    /// not written again by a later turn (the worker exits on the first).
    @Test func theSinkThrowsWhatTheLogCannotTake() throws {
        let directory = makePrivateDirectory("grove-audit")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let sink = AuditSink()
        sink.use(directory: directory)
        try sink.adopt(AuditPlacement(machines: ["a"]), worker: "w-0")
        let path = try #require(sink.path)
        let line = AuditLine(time: "2026-11-26T06:01:02.123Z", worker: "w-0", address: "a", origin: "sent",
                             event: Array("{}".utf8), before: "sha256:00", after: "sha256:11")
        sink.append(line)
        try sink.writePending()
        let full = try Self.full()
        defer { close(full) }
        try Self.redirect(path, to: full)
        sink.append(line)
        let error = #expect(throws: AuditLogError.self) { try sink.writePending() }
        #expect(error?.code == .cannotWrite && error?.path == path && error?.message.contains("No space left on device") == true,
                "\(String(describing: error))")
        #expect(throws: Never.self, "nothing is pending after the failed write") { try sink.writePending() }
        #expect(try String(contentsOfFile: path, encoding: .utf8) == String(decoding: line.bytes, as: UTF8.self))
    }

    /// A line the file took in part (the disk filled mid-write and the worker exited 74, or it
    /// was killed mid-write) stays on a line of its own: the next process's first line is not
    /// glued to it, so it parses.
    @Test func aPartialLineLeftByAnEarlierRunIsEndedBeforeTheNextLine() throws {
        let directory = makePrivateDirectory("grove-audit")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/w.jsonl"
        try #require(FileManager.default.createFile(atPath: path, contents: Data("{}\n{\"par".utf8), attributes: [.posixPermissions: 0o600]))
        let log = try AuditLog(directory: directory, worker: "w", sync: false)
        try log.append(Array("{\"b\":1}\n".utf8))
        try log.append(Array("{\"c\":2}\n".utf8))
        #expect(try String(contentsOfFile: path, encoding: .utf8) == "{}\n{\"par\n{\"b\":1}\n{\"c\":2}\n")

        // A log that ends with its last line, or is empty, gets no empty line.
        let again = try AuditLog(directory: directory, worker: "w", sync: false)
        try again.append(Array("{}\n".utf8))
        #expect(try String(contentsOfFile: path, encoding: .utf8).hasSuffix("{\"c\":2}\n{}\n"))
        let fresh = try AuditLog(directory: directory, worker: "v", sync: false)
        try fresh.append(Array("{}\n".utf8))
        #expect(try String(contentsOfFile: directory + "/v.jsonl", encoding: .utf8) == "{}\n")
    }

    @Test func aDirectoryThatCannotBeCreatedIsRefusedNamingIt() throws {
        let base = makePrivateDirectory("grove-audit")
        defer { try? FileManager.default.removeItem(atPath: base) }
        // A file where a directory on the way belongs.
        #expect(FileManager.default.createFile(atPath: base + "/file", contents: nil))
        let below = #expect(throws: AuditLogError.self) { try AuditLog(directory: base + "/file/audit", worker: "w", sync: false) }
        #expect(below?.code == .cannotOpen && below?.path == base + "/file", "\(String(describing: below))")
        #expect(below?.message.contains("\(base)/file is a regular file where a directory belongs; remove it (rm \(base)/file)") == true
                && below?.message.contains("or set the topology's audit.directory (--audit-dir for a worker started by hand)") == true,
                "\(String(describing: below))")
        // A file system where nothing may be created, even by root.
        let proc = "/proc/grove-audit-\(UUID().uuidString)"
        let refused = #expect(throws: AuditLogError.self) { try AuditLog(directory: proc + "/audit", worker: "w", sync: false) }
        #expect(refused?.code == .cannotOpen && refused?.path == proc, "\(String(describing: refused))")
        #expect(refused?.message.hasPrefix("the audit directory: cannot create \(proc) (") == true
                && refused?.message.contains("check the permissions of its parent") == true, "\(String(describing: refused))")
    }

    @Test func aDirectoryWhereTheFileBelongsIsRefusedNamingIt() throws {
        let directory = makePrivateDirectory("grove-audit")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        mkdir(directory + "/w.jsonl", 0o700)
        let error = #expect(throws: AuditLogError.self) { try AuditLog(directory: directory, worker: "w", sync: false) }
        #expect(error?.code == .cannotOpen && error?.path == directory + "/w.jsonl", "\(String(describing: error))")
        #expect(error?.message.hasPrefix("cannot open the audit log \(directory)/w.jsonl: Is a directory") == true, "\(String(describing: error))")
    }

    /// The file is 0600 whatever it was found with: its lines carry digests of states with secrets.
    @Test func aFileOthersMayReadIsMadePrivate() throws {
        let directory = makePrivateDirectory("grove-audit")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        #expect(FileManager.default.createFile(atPath: directory + "/w.jsonl", contents: Data("{}\n".utf8)))
        chmod(directory + "/w.jsonl", 0o666)
        let log = try AuditLog(directory: directory, worker: "w", sync: false)
        try log.append(Array("{}\n".utf8))
        #expect(PrivateDirectoryTests.mode(directory + "/w.jsonl") == 0o600)
        #expect(try String(contentsOfFile: directory + "/w.jsonl", encoding: .utf8) == "{}\n{}\n")
    }

    @Test(.enabled(if: isRoot, "needs root to give a file or a directory to another user"))
    func anotherUsersFileOrDirectoryIsRefusedNamingIt() throws {
        let directory = makePrivateDirectory("grove-audit")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        #expect(FileManager.default.createFile(atPath: directory + "/w.jsonl", contents: Data("theirs\n".utf8)))
        chown(directory + "/w.jsonl", 65534, 65534)
        let file = #expect(throws: AuditLogError.self) { try AuditLog(directory: directory, worker: "w", sync: false) }
        #expect(file?.code == .cannotOpen && file?.path == directory + "/w.jsonl", "\(String(describing: file))")
        #expect(file?.message.contains("\(directory)/w.jsonl belongs to \(PathProblem.user(65534)), not to you") == true
                && file?.message.contains("rm -r \(directory)/w.jsonl") == true, "\(String(describing: file))")
        #expect(try String(contentsOfFile: directory + "/w.jsonl", encoding: .utf8) == "theirs\n")

        mkdir(directory + "/theirs", 0o700)
        chown(directory + "/theirs", 65534, 65534)
        let folder = #expect(throws: AuditLogError.self) { try AuditLog(directory: directory + "/theirs", worker: "w", sync: false) }
        #expect(folder?.code == .cannotOpen && folder?.path == directory + "/theirs", "\(String(describing: folder))")
        #expect(folder?.message.contains("\(directory)/theirs belongs to") == true, "\(String(describing: folder))")
        #expect(!FileManager.default.fileExists(atPath: directory + "/theirs/w.jsonl"))
    }

    /// Opening at a welcome: what the sink throws is the log's refusal, and nothing is audited.
    @Test func aSinkWhoseLogCannotOpenAuditsNothing() throws {
        let base = makePrivateDirectory("grove-audit")
        defer { try? FileManager.default.removeItem(atPath: base) }
        chmod(base, 0o755)
        let sink = AuditSink()
        sink.use(directory: base)
        let error = #expect(throws: AuditLogError.self) { try sink.adopt(AuditPlacement(machines: ["a"]), worker: "w-0") }
        #expect(error?.code == .cannotOpen && error?.path == base && error?.message.contains("chmod 700 \(base)") == true,
                "\(String(describing: error))")
        #expect(sink.path == nil && sink.carriesStates(forAddress: "a") == nil)
        #expect(!FileManager.default.fileExists(atPath: base + "/w-0.jsonl"))
    }
}
