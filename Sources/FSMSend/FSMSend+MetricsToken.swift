import ArgumentParser
import Foundation
import GroveCluster
import GroveView

extension FSMSend {
    struct MetricsToken: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "metrics-token",
            abstract: "Print a token for scraping a topology's metrics endpoint with this client key.",
            discussion: """
                A topology whose metrics listen off loopback, or set "requireToken", serves a scrape only with \
                `Authorization: Bearer <token>`, a token made here from a client key whose read role covers \
                every machine: signed with the secret this key shares with the coordinator's (Curve25519), which \
                fsm-launch checks without having handed it out. Write it to a file of mode 0600 for Prometheus \
                (`authorization: {credentials_file: FILE}`); anyone with it reads the metrics until it expires. \
                Removing the key from the topology (and relaunching) revokes its tokens.

                Needs --key-file and --coordinator-key (or their variables).
                """)

        @Option(help: "Days until the token expires: at least 1, at most 30.")
        var days: Int = 30

        @OptionGroup var connection: Connection

        func validate() throws {
            guard (1...30).contains(days) else {
                throw ValidationError("--days must be between 1 and 30, e.g. --days 7; got \(days)")
            }
        }

        func run() throws {
            guard let credentials = try connection.credentials() else {
                throw ValidationError("fsm-send metrics-token needs a client key: --key-file NAME.key_secret and --coordinator-key coordinator.key")
            }
            let shared = try KeyToken.sharedSecret(secretKey: credentials.keys.secretKey.bytes, publicKey: credentials.coordinator.bytes)
            let expiresAt = Int64(Date().timeIntervalSince1970) + Int64(days) * 24 * 3600
            print(KeyToken.make(shared: shared, publicKey: credentials.keys.publicKey.bytes, expiresAt: expiresAt, for: .metrics))
        }
    }
}
