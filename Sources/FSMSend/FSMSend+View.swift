import ArgumentParser
import Foundation
import GroveCluster
import GroveView

extension FSMSend {
    struct View: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print a URL of the live view for this client key's roles.",
            discussion: """
                The live view (a topology's "view") is a web page; a browser cannot present a CURVE key, so \
                this makes a token from the key: signed with the secret this key shares with the coordinator's \
                (Curve25519), which fsm-launch checks without having handed it out. The page then shows what \
                the key's read role covers and allows what its send and admin roles allow. Anyone with the URL \
                acts as this key until it expires: keep it to yourself.

                Needs --key-file and --coordinator-key (or their variables). Without keys (ipc, the launching \
                user alone) open the URL fsm-launch printed on its `view` line.
                """)

        @Option(help: ArgumentHelp("The view's address, as fsm-launch's `view` line prints it (the token, if any, is replaced).",
                                   valueName: "url"))
        var url: String

        @Option(help: "Minutes until the URL expires: at least 1, at most 1440 (a day).")
        var minutes: Int = 60

        @OptionGroup var connection: Connection

        func validate() throws {
            guard (1...1440).contains(minutes) else {
                throw ValidationError("--minutes must be between 1 and 1440 (a day), e.g. --minutes 60; got \(minutes)")
            }
            guard url.hasPrefix("http://") else {
                throw ValidationError("--url must be the view's http:// address, as fsm-launch's `view` line prints it; got \(url)")
            }
        }

        func run() throws {
            guard let credentials = try connection.credentials() else {
                throw ValidationError("fsm-send view needs a client key: --key-file NAME.key_secret and --coordinator-key coordinator.key. "
                    + "Without keys, open the URL fsm-launch printed on its `view` line")
            }
            let shared = try KeyToken.sharedSecret(secretKey: credentials.keys.secretKey.bytes, publicKey: credentials.coordinator.bytes)
            let expiresAt = Int64(Date().timeIntervalSince1970) + Int64(minutes) * 60
            let token = KeyToken.make(shared: shared, publicKey: credentials.keys.publicKey.bytes, expiresAt: expiresAt)
            let base = url.split(separator: "?", maxSplits: 1).first.map(String.init) ?? url
            print((base.hasSuffix("/") ? base : base + "/") + "?token=" + token)
        }
    }
}
