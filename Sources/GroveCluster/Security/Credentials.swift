public import GroveWire
public import Foundation
package import ZeroMQ

/// What a client or worker needs to connect to a coordinator that speaks CURVE: a key pair of
/// its own (which the topology accepts) and the coordinator's public key.
///
/// ```swift
/// let credentials = try Credentials(keyFile: "keys/ops.key_secret", coordinatorKey: "keys/coordinator.key")
/// let client = try Client(endpoint: "tcp://grove-1:5555", credentials: credentials)
/// ```
public struct Credentials: Sendable {
    /// The environment variable naming the secret key file when no option does.
    public static let keyFileVariable = "GROVE_KEY_FILE"
    /// The environment variable holding the coordinator's public key (a `.key` file or its 40
    /// Z85 characters) when no option does.
    public static let coordinatorKeyVariable = "GROVE_COORDINATOR_KEY"

    package let keys: CurveKeyPair
    package let coordinator: CurveKey

    package init(keys: CurveKeyPair, coordinator: CurveKey) {
        self.keys = keys
        self.coordinator = coordinator
    }

    /// Reads the credentials from files.
    /// - Parameters:
    ///   - keyFile: This process's `NAME.key_secret` (mode 0600), or `-` to read its text from
    ///     standard input (how `fsm-launch` hands its workers their keys).
    ///   - coordinatorKey: The coordinator's public key: its `.key` file or the 40 Z85 characters.
    /// - Throws: ``WireError`` `invalid-endpoint` naming the file and what is wrong with it.
    public init(keyFile: String, coordinatorKey: String) throws(WireError) {
        do {
            keys = keyFile == "-"
                ? try KeyFile.keyPair(text: String(decoding: FileHandle.standardInput.readDataToEndOfFile(), as: UTF8.self), source: "standard input")
                : try KeyFile.keyPair(at: keyFile)
            coordinator = try KeyFile.publicKey(ofKeyOrFile: coordinatorKey)
        } catch {
            throw WireError(.invalidEndpoint, "cannot use the CURVE keys: \(error)")
        }
    }

    /// These keys, speaking to another CURVE server: a worker's direct endpoint, whose public
    /// key (Z85) the coordinator gave in a `location`. `nil` when `serverKey` is not a key.
    package func speaking(to serverKey: String) -> Credentials? {
        CurveKey(z85: serverKey).map { Credentials(keys: keys, coordinator: $0) }
    }

    /// The credentials the options name, else the environment's (``keyFileVariable``,
    /// ``coordinatorKeyVariable``); `nil` when neither names a key file.
    /// - Throws: ``WireError`` when only one of the two is given, or a file cannot be used.
    public static func resolve(keyFile: String?, coordinatorKey: String?,
                               environment: [String: String] = ProcessInfo.processInfo.environment) throws(WireError) -> Credentials? {
        let keyFile = keyFile ?? environment[keyFileVariable]
        let coordinatorKey = coordinatorKey ?? environment[coordinatorKeyVariable]
        switch (keyFile, coordinatorKey) {
        case (nil, nil):
            return nil
        case (let keyFile?, let coordinatorKey?):
            return try Credentials(keyFile: keyFile, coordinatorKey: coordinatorKey)
        case (nil, _?):
            throw WireError(.invalidEndpoint, "a coordinator key was given but no key of this process's own: add --key-file NAME.key_secret (or set \(keyFileVariable))")
        case (_?, nil):
            throw WireError(.invalidEndpoint, "a key file was given but not the coordinator's public key: add --coordinator-key coordinator.key (or set \(coordinatorKeyVariable))")
        }
    }

    /// Makes `socket` a CURVE client with these keys. Before `connect`.
    package func apply(to socket: Socket) throws(ZMQError) {
        try socket.becomeCurveClient(of: coordinator, keys: keys)
    }
}
