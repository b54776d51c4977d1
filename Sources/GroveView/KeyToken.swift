import Crypto
import Foundation

/// A token a client makes for itself with its CURVE key, which the live view (or the metrics
/// endpoint) checks without having handed it out: `fsm-send view` computes, from the client's secret key and the coordinator's
/// public key, the same Curve25519 shared secret fsm-launch computes from the coordinator's
/// secret key and the client's public key (X25519, what CURVE's handshake rests on), and signs
/// the token's expiry with it (HMAC-SHA256). Only the holder of a key the topology lists can
/// make one, it needs no new message on the wire, and it is bound to that key's grants.
///
/// The text: `<client public key, hex>.<expiry, seconds since 1970>.<HMAC, hex>`. What the
/// token is for is signed with it (``Purpose``): a view token does not open the metrics, nor the
/// other way round.
package enum KeyToken {
    /// What a token opens.
    package enum Purpose: Sendable {
        /// The live view (`fsm-send view`).
        case view
        /// The metrics endpoint (`fsm-send metrics-token`), for a scraper's configuration.
        case metrics

        /// The longest a token may be valid for: a leaked view URL is good for a day at most;
        /// a scraper's token lives in its configuration, so 30 days.
        package var maxLifetimeSeconds: Int64 {
            switch self {
            case .view: 24 * 3600
            case .metrics: 30 * 24 * 3600
            }
        }

        /// What the MAC covers before the key and the expiry.
        var label: String {
            switch self {
            case .view: "grove-view v1"
            case .metrics: "grove-metrics v1"
            }
        }
    }

    /// The longest a view token may be valid for.
    package static let maxLifetimeSeconds = Purpose.view.maxLifetimeSeconds

    /// The Curve25519 shared secret of one side's secret key and the other's public key.
    /// - Throws: When a key is not 32 bytes.
    package static func sharedSecret(secretKey: [UInt8], publicKey: [UInt8]) throws -> [UInt8] {
        let secret = try Curve25519.KeyAgreement.PrivateKey(rawRepresentation: secretKey)
        let shared = try secret.sharedSecretFromKeyAgreement(with: Curve25519.KeyAgreement.PublicKey(rawRepresentation: publicKey))
        return shared.withUnsafeBytes { Array($0) }
    }

    /// The token for the client `publicKey`, valid until `expiresAt` (seconds since 1970).
    package static func make(shared: [UInt8], publicKey: [UInt8], expiresAt: Int64, for purpose: Purpose = .view) -> String {
        "\(hex(publicKey)).\(expiresAt).\(hex(mac(shared: shared, publicKey: publicKey, expiresAt: expiresAt, for: purpose)))"
    }

    /// The parts of `token`, or `nil` when it is not one.
    package static func parse(_ token: String) -> (publicKey: String, expiresAt: Int64, mac: [UInt8])? {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, parts[0].count == 64, let expiresAt = Int64(parts[1]), let mac = bytes(hex: parts[2]), mac.count == 32 else {
            return nil
        }
        return (String(parts[0]).lowercased(), expiresAt, mac)
    }

    /// Whether `mac` is the one for this key and expiry, compared in constant time.
    package static func verify(_ mac: [UInt8], shared: [UInt8], publicKey: [UInt8], expiresAt: Int64, for purpose: Purpose = .view) -> Bool {
        let expected = self.mac(shared: shared, publicKey: publicKey, expiresAt: expiresAt, for: purpose)
        return mac.count == expected.count && zip(mac, expected).reduce(0) { $0 | ($1.0 ^ $1.1) } == 0
    }

    static func mac(shared: [UInt8], publicKey: [UInt8], expiresAt: Int64, for purpose: Purpose) -> [UInt8] {
        let message = Data("\(purpose.label) \(hex(publicKey)) \(expiresAt)".utf8)
        return Array(HMAC<SHA256>.authenticationCode(for: message, using: SymmetricKey(data: shared)))
    }

    package static func hex(_ bytes: [UInt8]) -> String {
        bytes.map { String($0, radix: 16).count == 1 ? "0" + String($0, radix: 16) : String($0, radix: 16) }.joined()
    }

    static func bytes(hex text: Substring) -> [UInt8]? {
        guard text.count.isMultiple(of: 2) else { return nil }
        var bytes: [UInt8] = []
        var index = text.startIndex
        while index < text.endIndex {
            let next = text.index(index, offsetBy: 2)
            guard let byte = UInt8(text[index..<next], radix: 16) else { return nil }
            bytes.append(byte)
            index = next
        }
        return bytes
    }
}
