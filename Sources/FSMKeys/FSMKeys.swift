import ArgumentParser
import Foundation
import GroveCluster
import ZeroMQ

@main
struct FSMKeys: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "fsm-keys",
        abstract: "Makes and reads the CURVE keys a topology names.",
        discussion: """
            Keys are ZeroMQ certificate files: NAME.key holds the public key and may be copied \
            anywhere; NAME.key_secret (mode 0600) holds the secret key and stays on the host of the \
            process it belongs to. pyzmq reads both with zmq.auth.load_certificate(path).
            """,
        subcommands: [New.self, Show.self]
    )

    struct New: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Writes a new key pair: NAME.key and NAME.key_secret.",
            discussion: """
                Examples:
                  fsm-keys new coordinator --dir keys     the coordinator's pair (security.coordinatorKey)
                  fsm-keys new edge --dir keys            an external worker group's pair (its "key")
                  fsm-keys new ops --dir keys             a client's pair (security.clients)
                """
        )

        @Argument(help: "The pair's name: the files are NAME.key and NAME.key_secret.")
        var name: String

        @Option(help: "The folder to write into; created (mode 0700) when missing.")
        var dir: String = "."

        @Flag(help: "Replace an existing pair of that name.")
        var force = false

        func run() throws {
            guard !name.isEmpty, !name.contains("/") else {
                throw ValidationError("the name '\(name)' must be non-empty and without '/'; use --dir for the folder")
            }
            try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true,
                                                    attributes: [.posixPermissions: 0o700])
            let keys = try CurveKeyPair.generate()
            let base = URL(filePath: dir).appending(path: name).path
            let written = try KeyFile.write(keys, base: base, name: name, replacing: force)
            print("public key \(keys.publicKey.z85)")
            print("wrote \(written.public) (share it) and \(written.secret) (mode 0600, keep it on this host)")
        }
    }

    struct Show: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Prints the public key in a .key or .key_secret file.")

        @Argument(help: "A NAME.key or NAME.key_secret file.")
        var file: String

        func run() throws {
            print(try KeyFile.publicKey(at: file).z85)
        }
    }
}
