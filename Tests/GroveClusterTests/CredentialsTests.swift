import Foundation
@testable import GroveCluster
@testable import GroveClient
@testable import GroveCoordinator
@testable import GroveWorker
import GroveTestSupport
import GroveWire
import Testing
import ZeroMQ

/// What a client or worker connects to a CURVE coordinator with: read from the options, else the
/// environment; refused, with the file and what to do, when it cannot be used; and never shown
/// with its secret key, in an error or in a description.
@Suite("Credentials", .timeLimit(.minutes(2)))
struct CredentialsTests {
    /// A folder with the pairs `ops`, `other` and `coordinator`, as fsm-keys writes them.
    struct Folder {
        let path: String
        let ops, other, coordinator: CurveKeyPair

        init() throws {
            path = makePrivateDirectory("grove-credentials")
            (ops, other, coordinator) = (try .generate(), try .generate(), try .generate())
            for (name, keys) in [("ops", ops), ("other", other), ("coordinator", coordinator)] {
                try KeyFile.write(keys, base: path + "/" + name, name: name)
            }
        }

        func file(_ name: String) -> String { path + "/" + name }
        func remove() { try? FileManager.default.removeItem(atPath: path) }
    }

    /// The text of every way `credentials` can be shown.
    static func shown(_ value: some Any) -> [String] {
        var dumped = ""
        dump(value, to: &dumped)
        return [String(describing: value), String(reflecting: value), dumped, "\(Mirror(reflecting: value).children.map { $0.value })"]
    }

    @Test func nothingGivenIsNoCredentials() throws {
        #expect(try Credentials.resolve(keyFile: nil, coordinatorKey: nil, environment: [:]) == nil)
        #expect(try Credentials.resolve(keyFile: nil, coordinatorKey: nil, environment: ["HOME": "/root"]) == nil)
    }

    @Test func theOptionsAreRead() throws {
        let folder = try Folder()
        defer { folder.remove() }
        let credentials = try #require(try Credentials.resolve(keyFile: folder.file("ops.key_secret"),
                                                               coordinatorKey: folder.file("coordinator.key"), environment: [:]))
        #expect(credentials.keys == folder.ops && credentials.coordinator == folder.coordinator.publicKey)
        // The coordinator's key as its 40 characters, as `GROVE_COORDINATOR_KEY` may hold it.
        let typed = try Credentials(keyFile: folder.file("ops.key_secret"), coordinatorKey: folder.coordinator.publicKey.z85)
        #expect(typed.coordinator == folder.coordinator.publicKey)
    }

    @Test func theEnvironmentIsReadWhenNoOptionIsGivenAndAnOptionWins() throws {
        let folder = try Folder()
        defer { folder.remove() }
        let environment = [Credentials.keyFileVariable: folder.file("other.key_secret"),
                           Credentials.coordinatorKeyVariable: folder.coordinator.publicKey.z85]
        #expect(Credentials.keyFileVariable == "GROVE_KEY_FILE" && Credentials.coordinatorKeyVariable == "GROVE_COORDINATOR_KEY")
        let fromEnvironment = try #require(try Credentials.resolve(keyFile: nil, coordinatorKey: nil, environment: environment))
        #expect(fromEnvironment.keys == folder.other && fromEnvironment.coordinator == folder.coordinator.publicKey)
        let option = try #require(try Credentials.resolve(keyFile: folder.file("ops.key_secret"), coordinatorKey: nil, environment: environment))
        #expect(option.keys == folder.ops, "--key-file wins over GROVE_KEY_FILE")
        let both = try #require(try Credentials.resolve(keyFile: nil, coordinatorKey: folder.file("ops.key"), environment: environment))
        #expect(both.keys == folder.other && both.coordinator == folder.ops.publicKey, "--coordinator-key wins over GROVE_COORDINATOR_KEY")
    }

    @Test func halfAPairIsRefusedNamingWhatIsMissing() throws {
        let folder = try Folder()
        defer { folder.remove() }
        let noKeyFile = #expect(throws: WireError.self) {
            try Credentials.resolve(keyFile: nil, coordinatorKey: folder.file("coordinator.key"), environment: [:])
        }
        #expect(noKeyFile?.code == .invalidEndpoint && noKeyFile?.message.contains("add --key-file NAME.key_secret (or set GROVE_KEY_FILE)") == true,
                "\(String(describing: noKeyFile))")
        let noCoordinator = #expect(throws: WireError.self) {
            try Credentials.resolve(keyFile: nil, coordinatorKey: nil, environment: [Credentials.keyFileVariable: folder.file("ops.key_secret")])
        }
        #expect(noCoordinator?.code == .invalidEndpoint
                && noCoordinator?.message.contains("add --coordinator-key coordinator.key (or set GROVE_COORDINATOR_KEY)") == true,
                "\(String(describing: noCoordinator))")
    }

    @Test func aKeyFileThatCannotBeUsedIsRefusedNamingIt() throws {
        let folder = try Folder()
        defer { folder.remove() }
        let secret = folder.ops.secretKey.z85
        try Data("curve\n    public-key = \"\(folder.other.publicKey.z85)\"\n    secret-key = \"\(secret)\"\n".utf8)
            .write(to: URL(filePath: folder.file("mismatched.key_secret")))
        chmod(folder.file("mismatched.key_secret"), 0o600)
        try Data("curve\n    secret-key = \"\(secret.dropLast())\"\n".utf8).write(to: URL(filePath: folder.file("short.key_secret")))
        chmod(folder.file("short.key_secret"), 0o600)
        let cases: [(keyFile: String, coordinatorKey: String, file: String, reason: String)] = [
            (folder.file("gone.key_secret"), folder.file("coordinator.key"), folder.file("gone.key_secret"), "cannot read it"),
            (folder.file("ops.key"), folder.file("coordinator.key"), folder.file("ops.key"), "no secret-key line: this is a public key file"),
            (folder.file("mismatched.key_secret"), folder.file("coordinator.key"), folder.file("mismatched.key_secret"), "does not belong"),
            (folder.file("short.key_secret"), folder.file("coordinator.key"), folder.file("short.key_secret"), "not 40 Z85 characters"),
            (folder.file("ops.key_secret"), folder.file("gone.key"), folder.file("gone.key"), "cannot read it"),
            (folder.file("ops.key_secret"), "tooShortForAKey", "tooShortForAKey", "cannot read it"),
        ]
        for (keyFile, coordinatorKey, file, reason) in cases {
            let error = #expect(throws: WireError.self) { try Credentials(keyFile: keyFile, coordinatorKey: coordinatorKey) }
            #expect(error?.code == .invalidEndpoint, "\(file)")
            let message = error?.message ?? ""
            #expect(message.hasPrefix("cannot use the CURVE keys: \(file): ") && message.contains(reason), "\(message)")
            #expect(!message.contains(secret) && !"\(String(describing: error))".contains(secret), "a refusal printed the secret key: \(message)")
        }
    }

    @Test func aSecretFileOthersMayReadIsRefusedWithTheFixToRun() throws {
        let folder = try Folder()
        defer { folder.remove() }
        chmod(folder.file("ops.key_secret"), 0o644)
        let error = #expect(throws: WireError.self) {
            try Credentials.resolve(keyFile: nil, coordinatorKey: nil,
                                    environment: [Credentials.keyFileVariable: folder.file("ops.key_secret"),
                                                  Credentials.coordinatorKeyVariable: folder.file("coordinator.key")])
        }
        #expect(error?.message == "cannot use the CURVE keys: \(folder.file("ops.key_secret")): holds a secret key but its mode is 644; run chmod 600 on it")
    }

    /// Credentials printed, dumped or mirrored (a log line, a debugger, a test's failure) show the
    /// public keys and never the secret one.
    @Test func theSecretKeyIsNeverShown() throws {
        let folder = try Folder()
        defer { folder.remove() }
        let credentials = try Credentials(keyFile: folder.file("ops.key_secret"), coordinatorKey: folder.file("coordinator.key"))
        let secret = folder.ops.secretKey.z85, bytes = "\(folder.ops.secretKey.bytes)"
        for text in Self.shown(credentials) + Self.shown(folder.ops) + Self.shown([credentials]) {
            #expect(!text.contains(secret) && !text.contains(bytes), "the secret key was shown: \(text)")
        }
        #expect(String(describing: credentials).contains(folder.ops.publicKey.z85), "the public keys still say which keys these are")
        #expect(String(describing: credentials).contains(folder.coordinator.publicKey.z85))
    }

    /// `--key-file -`: how fsm-launch hands a worker its secret, on standard input.
    @Test func aKeyFileOfDashIsReadFromStandardInput() throws {
        let folder = try Folder()
        defer { folder.remove() }
        func readingStandardInput(_ text: String, _ body: () throws -> Void) throws {
            var ends: [Int32] = [0, 0]
            try #require(pipe(&ends) == 0)
            let saved = dup(0)
            defer { dup2(saved, 0); close(saved) }
            let bytes = Array(text.utf8)
            try #require(write(ends[1], bytes, bytes.count) == bytes.count)
            close(ends[1])
            dup2(ends[0], 0)
            close(ends[0])
            try body()
        }
        try readingStandardInput(KeyFile.text(folder.ops, name: "ops", secret: true)) {
            let credentials = try Credentials(keyFile: "-", coordinatorKey: folder.file("coordinator.key"))
            #expect(credentials.keys == folder.ops)
        }
        try readingStandardInput(KeyFile.text(folder.ops, name: "ops", secret: false)) {
            let error = #expect(throws: WireError.self) { try Credentials(keyFile: "-", coordinatorKey: folder.file("coordinator.key")) }
            #expect(error?.message.hasPrefix("cannot use the CURVE keys: standard input: no secret-key line") == true, "\(String(describing: error))")
        }
    }
}
