import Foundation
import GroveCluster

/// A ``FlightLog`` in a memory-mapped file beside the worker's store,
/// `<directory>/<worker>.flight` (mode 0600: events hold machine data). The mapping is shared,
/// so what the worker wrote is in the kernel's page cache the moment it is written: it survives
/// kill -9, a trap and a hang, though not a power loss (nothing is synced: a crash of the host
/// takes the worker's machines back to their stored records anyway, and no event is blamed).
///
/// Layout, native byte order (the file is read back by the same host):
/// ```
/// offset size
/// 0      4    magic "GFR2"
/// 4      4    running: 1 between begin and end, else 0 (written last on begin, first on end)
/// 8      4    address length a
/// 12     4    event length e (0: the event was not recorded: too large, or it did not encode)
/// 16     1    codec: 1 binary, 2 JSON
/// 17     1    origin (RecordedRun.Origin)
/// 18     2    type name length t (0: unknown, or longer than 128 bytes)
/// 20     4    unused
/// 24     8    correlation: the id of the request that carried the event, 0 for none
/// 32     128  type name (UTF-8), t bytes of it; written only when it changes
/// 160    a    address (UTF-8), then e bytes of event
/// ```
/// A file of another version ("GFR1", before machine types and correlations were kept) is
/// started empty.
package final class MappedFlightLog: FlightLog, @unchecked Sendable {
    /// Room for the largest address (1024 bytes) and an event of up to 1 MiB, the largest
    /// payload the coordinator passes on. Pages never written take no disk.
    static let size = headerSize + 1024 + (1 << 20)
    private static let magic: UInt32 = 0x3252_4647 // "GFR2" read as little-endian
    private static let typeOffset = 32
    private static let typeRoom = 128
    private static let headerSize = typeOffset + typeRoom

    /// The file.
    package let path: String
    private let base: UnsafeMutableRawPointer
    /// The type name the file holds: most workers run one or a few types, so the name is
    /// written when it changes, not per event. Used from the worker's loop thread only.
    private var writtenType: String?

    /// Opens (creating when missing) the recorder of worker `worker` in `directory`, created
    /// as the store creates it when missing (0700, this user's alone): every worker records,
    /// durable machines or not.
    /// - Throws: ``StoreError`` `permission` (a link there, or another user's file or
    ///   directory, included) or `failed`, with what to do.
    package static func open(directory: String, worker: String) throws(StoreError) -> MappedFlightLog {
        try SQLiteMachineStore.createDirectory(directory)
        return try MappedFlightLog(path: URL(fileURLWithPath: directory).appendingPathComponent("\(worker).flight").path)
    }

    package init(path: String) throws(StoreError) {
        self.path = path
        // Not through a link, and not another user's file (``PrivateFile``): what it maps is
        // written on every event.
        let descriptor: Int32
        do throws(PrivateFile.OpenError) {
            descriptor = try PrivateFile.open(path, flags: O_CREAT | O_RDWR)
        } catch {
            throw StoreError.opening(path, error, what: "the flight recorder")
        }
        defer { Glibc.close(descriptor) }
        var status = stat()
        guard fstat(descriptor, &status) == 0 else { throw StoreError.fromErrno(errno, doing: "read the size of \(path)") }
        if Int(status.st_size) != Self.size, ftruncate(descriptor, off_t(Self.size)) != 0 {
            throw StoreError.fromErrno(errno, doing: "size the flight recorder \(path)")
        }
        guard let mapped = mmap(nil, Self.size, PROT_READ | PROT_WRITE, MAP_SHARED, descriptor, 0), mapped != MAP_FAILED else {
            throw StoreError.fromErrno(errno, doing: "map the flight recorder \(path)")
        }
        base = mapped
        if base.load(as: UInt32.self) != Self.magic {
            // New, not ours, or of another version: start empty.
            base.storeBytes(of: 0, toByteOffset: 4, as: UInt32.self)
            base.storeBytes(of: 0, toByteOffset: 18, as: UInt16.self)
            base.storeBytes(of: Self.magic, as: UInt32.self)
        }
    }

    deinit {
        munmap(base, Self.size)
    }

    package func begin(address: String, type: String, correlation: UInt64, event: UnsafeRawBufferPointer, binary: Bool,
                       origin: RecordedRun.Origin) {
        if type != writtenType { write(type: type) }
        let addressLength = address.utf8.withContiguousStorageIfAvailable { utf8 in
            let length = min(utf8.count, 1024)
            if length > 0 { (base + Self.headerSize).copyMemory(from: utf8.baseAddress!, byteCount: length) }
            return length
        } ?? copySlowly(address)
        let room = Self.size - Self.headerSize - addressLength
        let eventLength = event.count <= room ? event.count : 0
        if eventLength > 0 {
            (base + Self.headerSize + addressLength).copyMemory(from: event.baseAddress!, byteCount: eventLength)
        }
        base.storeBytes(of: UInt32(addressLength), toByteOffset: 8, as: UInt32.self)
        base.storeBytes(of: UInt32(eventLength), toByteOffset: 12, as: UInt32.self)
        base.storeBytes(of: RecordedRun.codecByte(binary: binary), toByteOffset: 16, as: UInt8.self)
        base.storeBytes(of: origin.rawValue, toByteOffset: 17, as: UInt8.self)
        base.storeBytes(of: correlation, toByteOffset: 24, as: UInt64.self)
        base.storeBytes(of: 1, toByteOffset: 4, as: UInt32.self)
    }

    /// Writes `type` into its place (its length 0 when it does not fit: unknown).
    private func write(type: String) {
        writtenType = type
        var length = 0
        let utf8 = Array(type.utf8)
        if utf8.count <= Self.typeRoom {
            utf8.withUnsafeBytes { (base + Self.typeOffset).copyMemory(from: $0.baseAddress!, byteCount: $0.count) }
            length = utf8.count
        }
        base.storeBytes(of: UInt16(length), toByteOffset: 18, as: UInt16.self)
    }

    /// An address whose UTF-8 is not contiguous (a bridged string): copied byte by byte.
    private func copySlowly(_ address: String) -> Int {
        var length = 0
        for byte in address.utf8.prefix(1024) {
            base.storeBytes(of: byte, toByteOffset: Self.headerSize + length, as: UInt8.self)
            length += 1
        }
        return length
    }

    package func end() {
        base.storeBytes(of: 0, toByteOffset: 4, as: UInt32.self)
    }

    package func takeUnfinished() -> RecordedRun? {
        guard base.load(fromByteOffset: 4, as: UInt32.self) == 1 else { return nil }
        defer { end() }
        let addressLength = Int(base.load(fromByteOffset: 8, as: UInt32.self))
        let eventLength = Int(base.load(fromByteOffset: 12, as: UInt32.self))
        guard addressLength > 0, addressLength <= 1024, eventLength <= Self.size - Self.headerSize - addressLength else { return nil }
        let address = String(decoding: UnsafeRawBufferPointer(start: base + Self.headerSize, count: addressLength), as: UTF8.self)
        let event = [UInt8](UnsafeRawBufferPointer(start: base + Self.headerSize + addressLength, count: eventLength))
        let typeLength = Int(base.load(fromByteOffset: 18, as: UInt16.self))
        let type = typeLength > 0 && typeLength <= Self.typeRoom
            ? String(decoding: UnsafeRawBufferPointer(start: base + Self.typeOffset, count: typeLength), as: UTF8.self) : nil
        return RecordedRun(address: address, event: event, binary: base.load(fromByteOffset: 16, as: UInt8.self) == 1,
                           origin: RecordedRun.Origin(rawValue: base.load(fromByteOffset: 17, as: UInt8.self)) ?? .unknown,
                           type: type, correlation: base.load(fromByteOffset: 24, as: UInt64.self))
    }
}
