import Foundation
@testable import GroveCluster
@testable import GroveClient
@testable import GroveCoordinator
@testable import GroveWorker
import Testing
import ZeroMQ

@Suite("Key files", .timeLimit(.minutes(2)))
struct KeyFileTests {
    func folder() throws -> String {
        let path = FileManager.default.temporaryDirectory.appending(path: "grove-keys-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    @Test func aWrittenPairReadsBackWithTheRightModes() throws {
        let dir = try folder()
        let keys = try CurveKeyPair.generate()
        let (publicFile, secretFile) = try KeyFile.write(keys, base: dir + "/edge", name: "edge")
        #expect(try KeyFile.publicKey(at: publicFile) == keys.publicKey)
        #expect(try KeyFile.publicKey(at: secretFile) == keys.publicKey)
        #expect(try KeyFile.keyPair(at: secretFile) == keys)
        let mode = { (path: String) in (try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int) ?? -1 }
        #expect(try mode(secretFile) == 0o600)
        #expect(try mode(publicFile) == 0o644)
        #expect(!(try String(contentsOfFile: publicFile, encoding: .utf8)).contains(keys.secretKey.z85))
    }

    /// `/` and `.` are Z85 characters: a key file whose path has exactly 40 characters was
    /// taken for a key (`fsm-send suspensions lift <path>` lifted nothing).
    @Test func aFortyCharacterPathIsReadAsAFile() throws {
        let dir = try folder()
        let keys = try CurveKeyPair.generate()
        let short = "/tmp/\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: short, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: short) }
        let name = String(repeating: "k", count: 40 - short.count - 5)
        let (publicFile, _) = try KeyFile.write(keys, base: short + "/" + name, name: name)
        #expect(publicFile.count == 40 && CurveKey(z85: publicFile) != nil, "the premise: \(publicFile) reads as Z85")
        #expect(try KeyFile.z85(ofKeyOrFile: publicFile) == keys.publicKey.z85)
        #expect(try KeyFile.z85(ofKeyOrFile: keys.publicKey.z85) == keys.publicKey.z85)
        _ = dir
    }

    @Test func anExistingPairIsNotReplacedUnlessAsked() throws {
        let dir = try folder()
        try KeyFile.write(try CurveKeyPair.generate(), base: dir + "/a", name: "a")
        #expect(throws: KeyFile.Problem.self) { try KeyFile.write(try CurveKeyPair.generate(), base: dir + "/a", name: "a") }
        let newer = try CurveKeyPair.generate()
        try KeyFile.write(newer, base: dir + "/a", name: "a", replacing: true)
        #expect(try KeyFile.publicKey(at: dir + "/a.key") == newer.publicKey)
    }

    /// Issue 34: `fsm-keys new NAME --force` wrote the secret through a link planted in the
    /// folder (into another user's file, and chmod-ed it). The link goes, not its target.
    @Test func replacingNeverWritesThroughALink() throws {
        let dir = try folder()
        let victim = dir + "/victim"
        try Data("untouched".utf8).write(to: URL(fileURLWithPath: victim))
        chmod(victim, 0o644)
        symlink(victim, dir + "/a.key_secret")
        symlink(victim, dir + "/a.key")
        // Not replacing: a link there is an entry there.
        #expect(throws: KeyFile.Problem.self) { try KeyFile.write(try CurveKeyPair.generate(), base: dir + "/a", name: "a") }
        let keys = try CurveKeyPair.generate()
        try KeyFile.write(keys, base: dir + "/a", name: "a", replacing: true)
        #expect(try String(contentsOfFile: victim, encoding: .utf8) == "untouched")
        #expect(try FileManager.default.attributesOfItem(atPath: victim)[.posixPermissions] as? Int == 0o644)
        var status = stat()
        lstat(dir + "/a.key_secret", &status)
        #expect(status.st_mode & S_IFMT == S_IFREG && status.st_mode & 0o777 == 0o600)
        #expect(try KeyFile.keyPair(at: dir + "/a.key_secret") == keys)
    }

    @Test func aFolderOthersMayWriteIsRefused() throws {
        for mode: mode_t in [0o777, 0o1777, 0o775] {
            let dir = try folder()
            chmod(dir, mode)
            let problem = try #require(throws: KeyFile.Problem.self) {
                try KeyFile.write(try CurveKeyPair.generate(), base: dir + "/a", name: "a")
            }
            #expect(problem.path == dir && problem.reason.contains("mode 0\(String(mode, radix: 8))")
                    && problem.reason.contains("mkdir -m 700"), "\(problem)")
            #expect(!FileManager.default.fileExists(atPath: dir + "/a.key_secret"))
        }
        // Below one: it could be swapped.
        let parent = try folder()
        chmod(parent, 0o777)
        mkdir(parent + "/keys", 0o700)
        let problem = try #require(throws: KeyFile.Problem.self) {
            try KeyFile.write(try CurveKeyPair.generate(), base: parent + "/keys/a", name: "a")
        }
        #expect(problem.path == parent && problem.reason.contains("mode 0777"), "\(problem)")
    }

    @Test func aSecretOthersCanReadIsRefused() throws {
        let dir = try folder()
        let (_, secretFile) = try KeyFile.write(try CurveKeyPair.generate(), base: dir + "/b", name: "b")
        chmod(secretFile, 0o644)
        let problem = try #require(throws: KeyFile.Problem.self) { try KeyFile.keyPair(at: secretFile) }
        #expect(problem.reason.contains("chmod 600"))
    }

    @Test func aPublicFileIsNotASecretOne() throws {
        let dir = try folder()
        let (publicFile, _) = try KeyFile.write(try CurveKeyPair.generate(), base: dir + "/c", name: "c")
        chmod(publicFile, 0o600)
        let problem = try #require(throws: KeyFile.Problem.self) { try KeyFile.keyPair(at: publicFile) }
        #expect(problem.reason.contains("key_secret"))
    }

    @Test func pyzmqStyleFilesAreRead() throws {
        let dir = try folder()
        let keys = try CurveKeyPair.generate()
        let text = """
            #   ****  Generated on 2026-01-01 by pyzmq  ****
            metadata
            curve
                public-key = "\(keys.publicKey.z85)"
                secret-key = "\(keys.secretKey.z85)"

            """
        let path = dir + "/py.key_secret"
        #expect(FileManager.default.createFile(atPath: path, contents: Data(text.utf8), attributes: [.posixPermissions: 0o600]))
        #expect(try KeyFile.keyPair(at: path) == keys)
    }

    @Test func z85RoundTripsAndRefusesNonsense() throws {
        let key = try CurveKeyPair.generate().publicKey
        #expect(CurveKey(z85: key.z85) == key)
        #expect(CurveKey(z85: "short") == nil)
        #expect(CurveKey(z85: String(repeating: "~", count: 41)) == nil)
        #expect(CurveKey(bytes: [1, 2, 3]) == nil)
    }
}
