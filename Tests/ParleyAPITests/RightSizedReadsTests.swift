import NIOCore
import NIOEmbedded
import Testing

@testable import ParleyAPI

struct RightSizedReadsTests {
    /// NIOSSL decrypts every read into one 32 KiB buffer it reuses; what the HTTP/2 parser keeps
    /// of a read must not share it, or each next read copies it into a new 32 KiB buffer.
    @Test func aReadGoesOnInABufferOfItsOwnSizeAndTheReusedBufferStaysUnshared() throws {
        let channel = EmbeddedChannel(handler: RightSizedReads())
        var reused = channel.allocator.buffer(capacity: 32 * 1024)
        reused.writeString("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n")
        try channel.writeInbound(reused)
        let kept = try #require(try channel.readInbound(as: ByteBuffer.self))
        #expect(kept == reused)
        #expect(kept.capacity < 1024)

        let before = reused.withVeryUnsafeBytes { UInt(bitPattern: $0.baseAddress) }
        reused.clear()
        reused.writeString("the next read")
        let after = reused.withVeryUnsafeBytes { UInt(bitPattern: $0.baseAddress) }
        #expect(before == after, "the reused buffer was copied on write: what went on still shares it")
        #expect(String(buffer: kept) == "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n")
        _ = try channel.finish()
    }

    /// A TLS connection reads at most 16 KiB a turn: what one turn reads NIOSSL decrypts into
    /// a buffer it keeps at that size for the rest of the connection.
    @Test func aTLSConnectionReadsAtMostOneRecordsWorthATurn() throws {
        let channel = EmbeddedChannel()
        let options = try #require(channel.syncOptions)
        // NIO's defaults for an accepted connection, which an embedded channel does not have.
        try options.setOption(ChannelOptions.maxMessagesPerRead, value: 4)
        try options.setOption(ChannelOptions.recvAllocator, value: AdaptiveRecvByteBufferAllocator())
        try TLSHTTPChannel.boundReads(of: channel)
        #expect(try options.getOption(ChannelOptions.maxMessagesPerRead) == 1)
        let reads = try #require(
            try options.getOption(ChannelOptions.recvAllocator) as? AdaptiveRecvByteBufferAllocator)
        #expect(reads.maximum <= 16_384)
        _ = try channel.finish()
    }
}
