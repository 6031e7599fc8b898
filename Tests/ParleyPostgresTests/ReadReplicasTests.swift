import Testing

@testable import ParleyPostgres

/// WAL positions as PostgreSQL writes them (`pg_lsn`: two hexadecimal halves).
struct ReadReplicasTests {
    @Test func walPositionsCompareAsNumbers() {
        #expect(ReadReplicas.lsn("0/16B3748") == 0x16B_3748)
        #expect(ReadReplicas.lsn("1/0") == 1 << 32)
        #expect(ReadReplicas.lsn("1/0")! > ReadReplicas.lsn("0/FFFFFFFF")!)
        for bad in ["", "16B3748", "0/", "x/1", "0/1/2"] { #expect(ReadReplicas.lsn(bad) == nil, "\(bad)") }
    }
}
