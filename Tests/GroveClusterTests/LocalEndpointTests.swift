import Foundation
@testable import GroveCluster
@testable import GroveClient
@testable import GroveCoordinator
@testable import GroveWorker
import GroveTestSupport
import GroveWire
import Testing
import ZeroMQ

/// What a client, watcher or worker checks before it connects: that only this user (or root)
/// could have made the socket it is about to reach.
@Suite("LocalEndpoint", .timeLimit(.minutes(2)))
struct LocalEndpointTests {
    /// Making a file another user's takes root (CI runs the tests as root).
    static let isRoot = geteuid() == 0

    /// Binds a ZeroMQ socket at `endpoint` for the test's length: a real socket file.
    static func bound(_ endpoint: String) throws -> (ZMQContext, Socket) {
        let context = try ZMQContext()
        let socket = try Socket(context, .router)
        try socket.setLinger(milliseconds: 0)
        try socket.bind(endpoint)
        return (context, socket)
    }

    @Test func anAbstractSocketIsRefusedWithoutCurve() {
        let error = #expect(throws: WireError.self) { try ClientEndpoint.verify("ipc://@grove-default/clients", curve: false) }
        #expect(error?.code == .untrustedEndpoint)
        #expect(error?.message.contains("any local user") == true, "\(String(describing: error))")
        #expect(error?.message.contains("--coordinator-key") == true)
        #expect(throws: Never.self) { try ClientEndpoint.verify("ipc://@grove-default/clients", curve: true) }
        #expect(throws: Never.self) { try ClientEndpoint.verify("tcp://127.0.0.1:5555", curve: false) }
    }

    @Test func aClientRefusesAnAbstractSocket() {
        let error = #expect(throws: WireError.self) { try Client(endpoint: "ipc://@grove-test-\(UUID().uuidString)", timeout: .milliseconds(100)) }
        #expect(error?.code == .untrustedEndpoint)
        let watching = #expect(throws: WireError.self) { try Watcher(endpoint: "ipc://@grove-test-\(UUID().uuidString)") }
        #expect(watching?.code == .untrustedEndpoint)
    }

    @Test func aSocketInAPrivateDirectoryPasses() throws {
        let endpoint = privateSocketEndpoint("clients")
        defer { try? FileManager.default.removeItem(atPath: LocalEndpoint(endpoint).directory!) }
        // Before the coordinator binds it (nothing there yet), and after.
        try ClientEndpoint.verify(endpoint, curve: false)
        let (context, socket) = try Self.bound(endpoint)
        defer { socket.close(); context.terminate() }
        try ClientEndpoint.verify(endpoint, curve: false)
        _ = try Client(endpoint: endpoint, timeout: .milliseconds(100))
    }

    @Test func aDirectoryOthersMayWriteIsRefused() throws {
        let directory = makePrivateDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        chmod(directory, 0o777)
        let error = #expect(throws: WireError.self) { try ClientEndpoint.verify("ipc://\(directory)/clients", curve: false) }
        #expect(error?.code == .untrustedEndpoint)
        #expect(error?.message.contains("chmod go-w \(directory)") == true, "\(String(describing: error))")
        // Sticky, as /tmp: others still may create a socket of their own in it.
        chmod(directory, 0o1777)
        #expect(throws: WireError.self) { try ClientEndpoint.verify("ipc://\(directory)/clients", curve: false) }
        // One level up, a sticky directory is fine (as /tmp is above every test's directory).
        let inner = directory + "/inner"
        mkdir(inner, 0o700)
        #expect(throws: Never.self) { try ClientEndpoint.verify("ipc://\(inner)/clients", curve: false) }
        // Without the sticky bit, anyone could rename `inner` and put their own in its place.
        chmod(directory, 0o777)
        let renamed = #expect(throws: WireError.self) { try ClientEndpoint.verify("ipc://\(inner)/clients", curve: false) }
        #expect(renamed?.message.contains(directory) == true, "\(String(describing: renamed))")
    }

    @Test func aDirectoryThatIsALinkIsRefusedAndLinksAboveAreFollowed() throws {
        let directory = makePrivateDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let real = directory + "/real"
        mkdir(real, 0o700)
        symlink(real, directory + "/link")
        let error = #expect(throws: WireError.self) { try ClientEndpoint.verify("ipc://\(directory)/link/clients", curve: false) }
        #expect(error?.message.contains("symbolic link") == true, "\(String(describing: error))")
        // A link above the socket's directory is followed, and where it leads checked.
        mkdir(real + "/sockets", 0o700)
        #expect(throws: Never.self) { try ClientEndpoint.verify("ipc://\(directory)/link/sockets/clients", curve: false) }
        chmod(real, 0o777)
        #expect(throws: WireError.self) { try ClientEndpoint.verify("ipc://\(directory)/link/sockets/clients", curve: false) }
    }

    @Test func aSocketPathThatIsALinkIsRefused() throws {
        let directory = makePrivateDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let (context, socket) = try Self.bound("ipc://\(directory)/real")
        defer { socket.close(); context.terminate() }
        symlink(directory + "/real", directory + "/clients")
        let error = #expect(throws: WireError.self) { try ClientEndpoint.verify("ipc://\(directory)/clients", curve: false) }
        #expect(error?.message.contains("symbolic link") == true, "\(String(describing: error))")
    }

    @Test(.enabled(if: isRoot, "needs root to give a socket to another user"))
    func anotherUsersSocketIsRefused() throws {
        let directory = makePrivateDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let (context, socket) = try Self.bound("ipc://\(directory)/clients")
        defer { socket.close(); context.terminate() }
        chown(directory + "/clients", 65534, 65534)
        let error = #expect(throws: WireError.self) { try Client(endpoint: "ipc://\(directory)/clients", timeout: .milliseconds(100)) }
        #expect(error?.code == .untrustedEndpoint)
        #expect(error?.message.contains("belongs to nobody (uid 65534)") == true, "\(String(describing: error))")
        // With CURVE, the coordinator's key proves it: the socket's owner does not matter.
        #expect(throws: Never.self) { try ClientEndpoint.verify("ipc://\(directory)/clients", curve: true) }
        // Another user's directory, even with a socket of mine in it.
        chown(directory + "/clients", 0, 0)
        chown(directory, 65534, 65534)
        #expect(throws: WireError.self) { try ClientEndpoint.verify("ipc://\(directory)/clients", curve: false) }
    }

    @Test func aListeningSocketIsTold() throws {
        let directory = makePrivateDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        #expect(!LocalEndpoint.isListening(directory + "/clients"))
        let (context, socket) = try Self.bound("ipc://\(directory)/clients")
        #expect(LocalEndpoint.isListening(directory + "/clients"))
        socket.close()
        context.terminate()
        #expect(!LocalEndpoint.isListening(directory + "/clients"))
    }
}
