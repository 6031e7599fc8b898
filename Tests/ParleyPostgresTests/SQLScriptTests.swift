import Testing

@testable import ParleyPostgres

struct SQLScriptTests {
    @Test func splitsAtTopLevelSemicolons() {
        #expect(
            SQLScript.statements(in: "CREATE TABLE a (x int);\nCREATE TABLE b (y int);\n") == [
                "CREATE TABLE a (x int)", "CREATE TABLE b (y int)",
            ])
    }

    @Test func keepsSemicolonsInsideStringsIdentifiersAndComments() {
        let script = """
            -- a comment; with a semicolon
            INSERT INTO t VALUES ('a;b', 'it''s; fine');
            /* block; comment */ SELECT "odd;name" FROM t;
            """
        #expect(
            SQLScript.statements(in: script) == [
                "-- a comment; with a semicolon\nINSERT INTO t VALUES ('a;b', 'it''s; fine')",
                "/* block; comment */ SELECT \"odd;name\" FROM t",
            ])
    }

    @Test func keepsDollarQuotedBodiesWhole() {
        let script = """
            CREATE FUNCTION f() RETURNS int AS $body$ BEGIN RETURN 1; END; $body$ LANGUAGE plpgsql;
            DO $$ BEGIN PERFORM 1; END $$;
            """
        let statements = SQLScript.statements(in: script)
        #expect(statements.count == 2)
        #expect(statements[0].hasSuffix("$body$ LANGUAGE plpgsql"))
        #expect(statements[1] == "DO $$ BEGIN PERFORM 1; END $$")
    }

    @Test func handlesEscapeStringsAndNestedComments() {
        let script = #"""
            SELECT E'it\'s; here', e'\\'; SELECT 1 /* outer /* inner; */ still; */; SELECT name';' FROM t;
            """#
        #expect(
            SQLScript.statements(in: script) == [
                #"SELECT E'it\'s; here', e'\\'"#, "SELECT 1 /* outer /* inner; */ still; */", "SELECT name';' FROM t",
            ])
    }

    @Test func dropsEmptyAndCommentOnlyStatements() {
        #expect(SQLScript.statements(in: ";;\n-- only a comment\n") == [])
    }
}
