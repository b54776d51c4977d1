internal import CZeroMQ

/// A CURVE key (Curve25519, 32 bytes), public or secret, as libzmq takes it.
package struct CurveKey: Sendable, Hashable, CustomStringConvertible {
    /// The 32 key bytes.
    package let bytes: [UInt8]

    /// A key from its 32 bytes; `nil` for any other length.
    package init?(bytes: [UInt8]) {
        guard bytes.count == 32 else { return nil }
        self.bytes = bytes
    }

    /// A key from its Z85 text (40 characters, as ZeroMQ's certificate files and pyzmq write
    /// it); `nil` when the text is not 40 Z85 characters.
    package init?(z85: String) {
        let text = Array(z85.utf8)
        guard text.count == 40 else { return nil }
        var decoded = [UInt8](repeating: 0, count: 32)
        let ok = (text + [0]).withUnsafeBufferPointer { source in
            decoded.withUnsafeMutableBufferPointer { target in
                source.withMemoryRebound(to: CChar.self) { zmq_z85_decode(target.baseAddress, $0.baseAddress) != nil }
            }
        }
        guard ok else { return nil }
        bytes = decoded
    }

    /// The key as 40 Z85 characters.
    package var z85: String {
        var text = [CChar](repeating: 0, count: 41)
        bytes.withUnsafeBufferPointer { _ = zmq_z85_encode(&text, $0.baseAddress, 32) }
        return String(decoding: text.prefix(40).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// The Z85 text; for a secret key print only where a secret belongs (a 0600 file).
    package var description: String { z85 }
}

/// A CURVE key pair.
package struct CurveKeyPair: Sendable, Equatable {
    package let publicKey: CurveKey
    package let secretKey: CurveKey

    package init(publicKey: CurveKey, secretKey: CurveKey) {
        self.publicKey = publicKey
        self.secretKey = secretKey
    }

    /// A new key pair from libzmq (`zmq_curve_keypair`, libsodium's random source).
    /// - Throws: `ZMQError` when libzmq was built without CURVE (`ENOTSUP`).
    package static func generate() throws(ZMQError) -> CurveKeyPair {
        var publicText = [CChar](repeating: 0, count: 41)
        var secretText = [CChar](repeating: 0, count: 41)
        guard zmq_curve_keypair(&publicText, &secretText) == 0 else {
            throw ZMQError.last("make a CURVE key pair (is libzmq built with libsodium?)")
        }
        defer { for index in secretText.indices { secretText[index] = 0 } }
        func key(_ text: [CChar]) -> CurveKey {
            CurveKey(z85: String(decoding: text.prefix(40).map { UInt8(bitPattern: $0) }, as: UTF8.self))!
        }
        return CurveKeyPair(publicKey: key(publicText), secretKey: key(secretText))
    }

    /// The public key that belongs to `secretKey` (`zmq_curve_public`).
    /// - Throws: `ZMQError` when libzmq was built without CURVE.
    package static func derive(from secretKey: CurveKey) throws(ZMQError) -> CurveKeyPair {
        var publicText = [CChar](repeating: 0, count: 41)
        let secretText = Array(secretKey.z85.utf8CString)
        guard zmq_curve_public(&publicText, secretText) == 0 else {
            throw ZMQError.last("derive a CURVE public key (is libzmq built with libsodium?)")
        }
        let publicKey = CurveKey(z85: String(decoding: publicText.prefix(40).map { UInt8(bitPattern: $0) }, as: UTF8.self))!
        return CurveKeyPair(publicKey: publicKey, secretKey: secretKey)
    }
}

/// A pair is shown by its public key alone: printed, dumped or mirrored (a log line, a debugger,
/// a failing test's values, anything holding a pair such as `Credentials`), its secret key is
/// `<redacted>`. Only a 0600 key file holds the secret as text.
extension CurveKeyPair: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    package var description: String { "CurveKeyPair(publicKey: \(publicKey.z85), secretKey: <redacted>)" }
    package var debugDescription: String { description }
    package var customMirror: Mirror { Mirror(self, children: ["publicKey": publicKey.z85, "secretKey": "<redacted>"]) }
}

extension Socket {
    /// Makes this socket a CURVE server (`ZMQ_CURVE_SERVER`, `ZMQ_CURVE_SECRETKEY`): every
    /// connection must complete a CURVE handshake with a client that knows `secretKey`'s public
    /// key, and is then checked by the ZAP handler (see ``setZAPDomain(_:)``). Set before `bind`.
    /// - Parameter secretKey: The server's secret key.
    /// - Throws: `ZMQError` when the socket is closed or libzmq has no CURVE.
    package func becomeCurveServer(secretKey: CurveKey) throws(ZMQError) {
        try setBytes(ZMQ_CURVE_SECRETKEY, secretKey.bytes, "ZMQ_CURVE_SECRETKEY")
        var on: Int32 = 1
        let handle = try open("set ZMQ_CURVE_SERVER")
        if zmq_setsockopt(handle, ZMQ_CURVE_SERVER, &on, MemoryLayout<Int32>.size) != 0 {
            throw ZMQError.last("set ZMQ_CURVE_SERVER")
        }
    }

    /// Makes this socket a CURVE client of the server whose public key is `serverKey`, proving
    /// it holds `keys` (`ZMQ_CURVE_SERVERKEY`, `ZMQ_CURVE_PUBLICKEY`, `ZMQ_CURVE_SECRETKEY`).
    /// Set before `connect`.
    /// - Throws: `ZMQError` when the socket is closed or libzmq has no CURVE.
    package func becomeCurveClient(of serverKey: CurveKey, keys: CurveKeyPair) throws(ZMQError) {
        try setBytes(ZMQ_CURVE_SERVERKEY, serverKey.bytes, "ZMQ_CURVE_SERVERKEY")
        try setBytes(ZMQ_CURVE_PUBLICKEY, keys.publicKey.bytes, "ZMQ_CURVE_PUBLICKEY")
        try setBytes(ZMQ_CURVE_SECRETKEY, keys.secretKey.bytes, "ZMQ_CURVE_SECRETKEY")
    }

    /// `ZMQ_ZAP_DOMAIN`: asks the context's ZAP handler (RFC 27, a socket bound at
    /// `inproc://zeromq.zap.01`) about every connection, naming this domain; with the NULL
    /// mechanism (plain ipc or tcp) only when a domain is set. Set before `bind`.
    /// - Parameter domain: 1–254 bytes naming what the socket serves, e.g. `"clients"`.
    /// - Throws: `ZMQError` when the socket is closed.
    package func setZAPDomain(_ domain: String) throws(ZMQError) {
        try setBytes(ZMQ_ZAP_DOMAIN, Array(domain.utf8), "ZMQ_ZAP_DOMAIN \(domain)")
    }

    private func setBytes(_ option: Int32, _ bytes: [UInt8], _ name: String) throws(ZMQError) {
        let handle = try open("set \(name)")
        let rc = bytes.withUnsafeBytes { zmq_setsockopt(handle, option, $0.baseAddress, $0.count) }
        if rc != 0 { throw ZMQError.last("set \(name)") }
    }
}

/// Whether this libzmq can do CURVE (`zmq_has("curve")`).
package var curveIsAvailable: Bool { zmq_has("curve") != 0 }
