/* The native engine core: a chunk's JSON lines -> per-table Arrow column buffers.
 *
 * Why: the Python engine (rows.py, row_typing.py, table_buffers.py) builds a Python object
 * per value (orjson's dict and str), looks each up and appends it to column lists; most of a
 * chunk's CPU is the cost of those objects. Here simdjson parses each line into its tape and
 * the values go straight from the tape into the column buffers Arrow takes
 * (validity bitmap, int32 offsets and UTF-8 data, int64 / double / bit-packed bool).
 *
 * Exactly what the Python engine does, or nothing: every decision that is not a pure
 * function of the bytes is asked of the engine's own Python objects through `hooks`
 * (native_core.py), once per new key path, table or column: naming (ColumnNames), the type
 * of a new column (ColumnTypes.new_column: preferred types, detections, forced types,
 * contracts), meeting a table (TablesMet). Anything this file does not reproduce exactly
 * raises NativeFallback with a one-line reason, and the caller runs the whole chunk through
 * the Python engine instead: a value whose type is not its column's (a coercion or a
 * variant), an integer beyond int64, a json column, an invalid or marked line, two keys of
 * one row that name one column, nesting at max_nesting, a timestamp text outside the common
 * ISO shapes. The order of every callback and of every visited value is the Python
 * engine's (seq numbers, first positions, column order), so the facts are the same too.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <simdjson.h>
#include "iso_text.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

namespace {

using simdjson::dom::array;
using simdjson::dom::element;
using simdjson::dom::element_type;
using simdjson::dom::object;

PyObject *NativeFallback = nullptr;

struct Fallback {
    std::string reason;
};
struct PyFailure {}; /* a Python exception is set */

[[noreturn]] void fall_back(const std::string &reason) { throw Fallback{reason}; }

PyObject *checked(PyObject *object) {
    if (object == nullptr) {
        throw PyFailure{};
    }
    return object;
}

/* An owned reference, released when it goes out of scope. */
struct Ref {
    PyObject *p = nullptr;
    Ref() = default;
    explicit Ref(PyObject *o) : p(o) {}
    Ref(const Ref &) = delete;
    Ref &operator=(const Ref &) = delete;
    Ref(Ref &&other) noexcept : p(other.p) { other.p = nullptr; }
    Ref &operator=(Ref &&other) noexcept {
        if (this != &other) {
            Py_XDECREF(p);
            p = other.p;
            other.p = nullptr;
        }
        return *this;
    }
    ~Ref() { Py_XDECREF(p); }
    PyObject *get() const { return p; }
    PyObject *release() {
        PyObject *o = p;
        p = nullptr;
        return o;
    }
};

/* ---- dlt's row keys: SHAKE-128 digests and random bytes as unpadded base64 ---------- */

const uint64_t KECCAK_RC[24] = {
    0x0000000000000001ULL, 0x0000000000008082ULL, 0x800000000000808aULL, 0x8000000080008000ULL,
    0x000000000000808bULL, 0x0000000080000001ULL, 0x8000000080008081ULL, 0x8000000000008009ULL,
    0x000000000000008aULL, 0x0000000000000088ULL, 0x0000000080008009ULL, 0x000000008000000aULL,
    0x000000008000808bULL, 0x800000000000008bULL, 0x8000000000008089ULL, 0x8000000000008003ULL,
    0x8000000000008002ULL, 0x8000000000000080ULL, 0x000000000000800aULL, 0x800000008000000aULL,
    0x8000000080008081ULL, 0x8000000000008080ULL, 0x0000000080000001ULL, 0x8000000080008008ULL};
constexpr int KECCAK_ROTC[24] = {1,  3,  6,  10, 15, 21, 28, 36, 45, 55, 2,  14,
                             27, 41, 56, 8,  25, 43, 62, 18, 39, 61, 20, 44};
constexpr int KECCAK_PILN[24] = {10, 7,  11, 17, 18, 3, 5,  16, 8,  21, 24, 4,
                             15, 23, 19, 13, 12, 2, 20, 14, 22, 9,  6,  1};

inline uint64_t rotl64(uint64_t x, int n) { return (x << n) | (x >> (64 - n)); }

/* Keccak-f[1600], the loops unrolled by the compiler (constant bounds): a nested row's key
 * is one permutation, and GitHub events have several nested rows per event. */
void keccak_f(uint64_t st[25]) {
    uint64_t bc[5];
    for (int round = 0; round < 24; round++) {
#pragma GCC unroll 5
        for (int i = 0; i < 5; i++) {
            bc[i] = st[i] ^ st[i + 5] ^ st[i + 10] ^ st[i + 15] ^ st[i + 20];
        }
#pragma GCC unroll 5
        for (int i = 0; i < 5; i++) {
            uint64_t t = bc[(i + 4) % 5] ^ rotl64(bc[(i + 1) % 5], 1);
#pragma GCC unroll 5
            for (int j = 0; j < 25; j += 5) {
                st[j + i] ^= t;
            }
        }
        uint64_t t = st[1];
#pragma GCC unroll 24
        for (int i = 0; i < 24; i++) {
            int j = KECCAK_PILN[i];
            uint64_t next = st[j];
            st[j] = rotl64(t, KECCAK_ROTC[i]);
            t = next;
        }
#pragma GCC unroll 5
        for (int j = 0; j < 25; j += 5) {
            uint64_t a0 = st[j], a1 = st[j + 1], a2 = st[j + 2], a3 = st[j + 3], a4 = st[j + 4];
            st[j] = a0 ^ (~a1 & a2);
            st[j + 1] = a1 ^ (~a2 & a3);
            st[j + 2] = a2 ^ (~a3 & a4);
            st[j + 3] = a3 ^ (~a4 & a0);
            st[j + 4] = a4 ^ (~a0 & a1);
        }
        st[0] ^= KECCAK_RC[round];
    }
}

/* The first 10 bytes of SHAKE-128 of `text` (little-endian lanes, x86-64). */
void shake128_10(const std::string &text, unsigned char out[10]) {
    const size_t rate = 168;
    uint64_t st[25] = {0};
    unsigned char *bytes = reinterpret_cast<unsigned char *>(st);
    size_t at = 0;
    for (unsigned char c : text) {
        bytes[at++] ^= c;
        if (at == rate) {
            keccak_f(st);
            at = 0;
        }
    }
    bytes[at] ^= 0x1F;
    bytes[rate - 1] ^= 0x80;
    keccak_f(st);
    memcpy(out, bytes, 10);
}

const char B64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/* 10 bytes as base64 without its "==" padding: 14 characters (row_keys._key). */
std::string key_text(const unsigned char ten[10]) {
    std::string out;
    out.reserve(14);
    for (int i = 0; i < 9; i += 3) {
        uint32_t v = (uint32_t)ten[i] << 16 | (uint32_t)ten[i + 1] << 8 | ten[i + 2];
        out.push_back(B64[(v >> 18) & 63]);
        out.push_back(B64[(v >> 12) & 63]);
        out.push_back(B64[(v >> 6) & 63]);
        out.push_back(B64[v & 63]);
    }
    uint32_t v = (uint32_t)ten[9] << 16;
    out.push_back(B64[(v >> 18) & 63]);
    out.push_back(B64[(v >> 12) & 63]);
    return out;
}

/* ---- ISO timestamps of the common shape (iso_text.h, shared with _speedups.c) ---------- */

int days_in_month(int year, int month) {
    static const int days[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    if (month == 2 && (year % 4 == 0 && (year % 100 != 0 || year % 400 == 0))) {
        return 29;
    }
    return days[month - 1];
}

/* Microseconds since the epoch (UTC) of ISO text in the shapes the C fast path takes
 * (YYYY-MM-DD[T ]HH:MM:SS[.fff|.ffffff][Z|+00:00|-00:00]); false for anything else, which
 * the Python engine's parser decides. */
bool common_iso_micros(std::string_view text, int64_t *micros) {
    int f[7];
    if (!iso_common_fields(text.data(), text.size(), f) || f[0] < 1 || f[1] < 1 || f[1] > 12 ||
        f[2] < 1 || f[2] > days_in_month(f[0], f[1])) {
        return false;
    }
    long long days = iso_days_from_civil(f[0], (unsigned)f[1], (unsigned)f[2]);
    *micros = (((days * 24 + f[3]) * 60 + f[4]) * 60 + f[5]) * 1000000LL + f[6];
    return true;
}

/* ---- column buffers ------------------------------------------------------------------ */

enum Kind { K_UNTYPED = 0, K_TEXT, K_BIGINT, K_DOUBLE, K_BOOL, K_TIMESTAMP, K_JSON, K_OTHER };

Kind kind_of(std::string_view type) {
    if (type == "text") return K_TEXT;
    if (type == "bigint") return K_BIGINT;
    if (type == "double") return K_DOUBLE;
    if (type == "bool") return K_BOOL;
    if (type == "timestamp") return K_TIMESTAMP;
    if (type == "json") return K_JSON;
    return K_OTHER;
}

void set_bit(std::vector<uint8_t> &bits, int64_t index) {
    size_t byte = (size_t)(index >> 3);
    if (bits.size() <= byte) {
        bits.resize(byte + 1 + bits.size() / 2, 0);
    }
    bits[byte] |= (uint8_t)(1u << (index & 7));
}

/* One column of one table, for the rows since its table's last flush: dense Arrow buffers
 * with a validity bitmap (rows without a value are nulls). */
struct Column {
    PyObject *name = nullptr; /* owned */
    std::string name_utf8;
    Kind kind = K_UNTYPED;
    uint64_t stamp = 0;  /* the row serial that last assigned it (two keys, one column) */
    int64_t filled = 0;  /* rows [0, filled) decided since the last flush */
    int64_t values = 0;  /* values among them */
    std::vector<uint8_t> validity;
    std::vector<int32_t> offsets{0};
    std::string data;
    std::vector<int64_t> fixed;
    std::vector<uint8_t> bits;

    void pad(int64_t row) {
        if (filled >= row) {
            return;
        }
        if (kind == K_TEXT) {
            offsets.insert(offsets.end(), (size_t)(row - filled), (int32_t)data.size());
        } else if (kind == K_BIGINT || kind == K_DOUBLE || kind == K_TIMESTAMP) {
            fixed.insert(fixed.end(), (size_t)(row - filled), 0);
        }
        filled = row;
    }
    void text(int64_t row, std::string_view value) {
        pad(row);
        if (data.size() + value.size() > (size_t)INT32_MAX) {
            fall_back("a text column over 2 GiB in one file");
        }
        data.append(value.data(), value.size());
        offsets.push_back((int32_t)data.size());
        set_bit(validity, row);
        filled = row + 1;
        values++;
    }
    void fixed64(int64_t row, int64_t value) {
        pad(row);
        fixed.push_back(value);
        set_bit(validity, row);
        filled = row + 1;
        values++;
    }
    void boolean(int64_t row, bool value) {
        pad(row);
        if (value) {
            set_bit(bits, row);
        }
        set_bit(validity, row);
        filled = row + 1;
        values++;
    }
    void reset() {
        filled = values = 0;
        validity.clear();
        offsets.assign(1, 0);
        data.clear();
        fixed.clear();
        bits.clear();
    }
};

PyObject *bitmap_bytes(std::vector<uint8_t> &bits, int64_t n) {
    size_t size = (size_t)((n + 7) / 8);
    bits.resize(size, 0);
    return checked(PyBytes_FromStringAndSize((const char *)bits.data(), (Py_ssize_t)size));
}

/* (name, validity or None, buffers...) of `n` rows, as table_buffers' C path gives them. */
PyObject *column_record(Column &c, int64_t n) {
    c.pad(n);
    Ref validity;
    if (c.values == n) {
        Py_INCREF(Py_None);
        validity = Ref(Py_None);
    } else {
        validity = Ref(bitmap_bytes(c.validity, n));
    }
    if (c.kind == K_TEXT) {
        Ref offsets(checked(PyBytes_FromStringAndSize((const char *)c.offsets.data(),
                                                      (Py_ssize_t)(c.offsets.size() * 4))));
        Ref data(checked(PyBytes_FromStringAndSize(c.data.data(), (Py_ssize_t)c.data.size())));
        return checked(PyTuple_Pack(4, c.name, validity.get(), offsets.get(), data.get()));
    }
    Ref values;
    if (c.kind == K_BOOL) {
        values = Ref(bitmap_bytes(c.bits, n));
    } else {
        values = Ref(checked(PyBytes_FromStringAndSize((const char *)c.fixed.data(),
                                                       (Py_ssize_t)(c.fixed.size() * 8))));
    }
    return checked(PyTuple_Pack(3, c.name, validity.get(), values.get()));
}

/* ---- key paths (the flatten prefixes) and tables -------------------------------------- */

struct StringHash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
};
using NameMap = std::unordered_map<std::string, int, StringHash, std::equal_to<>>;

/* A source key path below a row (ColumnNames.prefix_names' keys): its normalized parts and
 * its column name, from the engine's own name functions, asked once. */
struct Node {
    PyObject *parts = nullptr; /* owned tuple */
    PyObject *column = nullptr; /* owned str */
    std::string key;            /* the source key (UTF-8) */
    std::string column_utf8;
    bool system = false;  /* a `_dlt_` name: the Python engine's own columns */
    bool twin = false;    /* shares its column with a sibling key ("+1" and "-1": "_1") */
    uint64_t visit = 0;   /* the object visit that last met it (duplicate keys) */
    NameMap children;
    NameMap child_columns; /* column name -> child node, to find two keys of one name */
    std::vector<int> order; /* the children of the last object met here, in key order */
};

struct Table {
    PyObject *name = nullptr;  /* owned */
    PyObject *parts = nullptr; /* owned tuple */
    std::string name_utf8;
    int64_t rows = 0;
    bool ordered = false; /* has had a row (TableBuffers' order) */
    std::vector<int> node_columns; /* node id -> column index (-1: not yet) */
    NameMap by_name;
    std::vector<Column> columns;
    std::unordered_map<int, int> children; /* node id -> nested table */
    std::vector<int> root_order; /* the keys of its last row's object, in order */
};

constexpr int ROOT_NODE = 0;
constexpr int LIST_NODE = 1;
constexpr int MAX_WALK_DEPTH = 390; /* json_lines.MAX_DEPTH is 400: deeper lines go back */
constexpr int64_t MAX_ROW_WIDTH = 29000; /* json_lines.MAX_WIDTH is 30,000 */
const char MARK[] = "\xef\xa3\xa0"; /* extract's typed-JSON mark, U+F8E0 */

struct Pending {
    int node;
    array items;
    int depth;
};

struct Options {
    PyObject *hooks;
    PyObject *load_id; /* str */
    std::string load_id_utf8;
    PyObject *root_name;
    long chunk_index;
    long max_nesting;
    long flush_rows;
    bool propagate_root_key;
};

class Core {
  public:
    explicit Core(const Options &options) : o(options) {
        nodes.reserve(1024);
        nodes.emplace_back();
        nodes[ROOT_NODE].parts = checked(PyTuple_New(0));
        nodes.emplace_back();
        nodes[LIST_NODE].parts = checked(Py_BuildValue("(s)", "list"));
        nodes[LIST_NODE].column = checked(PyUnicode_FromString("list"));
        nodes[LIST_NODE].column_utf8 = "list";
        flushes = Ref(checked(PyList_New(0)));
    }
    ~Core() {
        for (Node &node : nodes) {
            Py_XDECREF(node.parts);
            Py_XDECREF(node.column);
        }
        for (Table &table : tables) {
            Py_XDECREF(table.name);
            Py_XDECREF(table.parts);
            for (Column &c : table.columns) {
                Py_XDECREF(c.name);
            }
        }
    }

    PyObject *run(const char *data, Py_ssize_t size, Py_ssize_t capacity);
    long parsed_lines = 0;

  private:
    const Options &o;
    simdjson::dom::parser parser;
    std::string padded;
    std::vector<Node> nodes;
    std::vector<Table> tables;
    std::vector<int> table_order;
    NameMap table_ids;
    std::vector<int> key_nodes; /* the nodes of the keys of the objects being flattened */
    std::vector<std::pair<object, int>> deferred; /* nested objects, flattened after their level */

    /* the key order last met under `prefix` in rows of `table` (rows of every table start at
     * the root node, so its order is kept per table) */
    std::vector<int> &order_of(int table, int prefix) {
        return prefix == ROOT_NODE ? tables[table].root_order : nodes[prefix].order;
    }
    void name_keys(object data, int table, int prefix);
    Ref flushes;
    long line = 0;
    long seq = 0;
    uint64_t row_serial = 0;
    uint64_t object_visit = 0;
    int root_table = -1;
    /* the nesting level of the row being flattened: its lists' rows are one level down,
     * however deep in the row's objects they were (dlt's count, RowFlattener's) */
    int row_level = 0;
    Ref root_key; /* hooks.root_key, fetched on the first root row */

    element parse_line(const char *start, size_t length, const char *end_of_buffer);
    void item(object root);
    void flatten(object data, int prefix, int depth, int table, int64_t row,
                 std::vector<Pending> &pending, int64_t &width);
    element last_twin(object data, size_t base, size_t at, std::vector<int> &merged);
    void process_lists(std::vector<Pending> &pending, int table, const std::string &parent_id,
                       const std::string *root_id);
    void process_list(array items, int parent_table, int node, int depth,
                      const std::string &parent_id, const std::string *root_id);
    int child_node(int parent, std::string_view key);
    int child_table(int parent_table, int node);
    int table_named(PyObject *name, PyObject *parts);
    int column_of_node(int table, int node);
    int column_named(int table, const char *name);
    int make_column(Table &t, PyObject *name, const std::string &utf8);
    Column &claim(int table, int column);
    void place(int table, int column, int64_t row, element value);
    void place_text(int table, int column, int64_t row, std::string_view value);
    void place_int(int table, int column, int64_t row, int64_t value);
    Kind decide(int table, Column &c, PyObject *value, const char *vt);
    void begin_row(int table);
    void end_row(int table);
    void flush(int table);
    std::string random_key();
};

element Core::parse_line(const char *start, size_t length, const char *end_of_buffer) {
    element doc;
    simdjson::error_code error;
    if (start + length + simdjson::SIMDJSON_PADDING <= end_of_buffer) {
        error = parser.parse((const uint8_t *)start, length, false).get(doc);
    } else { /* the last lines of the buffer: copied where simdjson may read past them */
        padded.assign(start, length);
        padded.append(simdjson::SIMDJSON_PADDING, '\0');
        error = parser.parse((const uint8_t *)padded.data(), length, false).get(doc);
    }
    if (error) {
        fall_back(std::string("a line simdjson refuses: ") + simdjson::error_message(error));
    }
    return doc;
}

bool blank(const char *start, size_t length) {
    for (size_t i = 0; i < length; i++) {
        char c = start[i];
        if (!(c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f')) {
            return false;
        }
    }
    return true;
}

PyObject *Core::run(const char *data, Py_ssize_t size, Py_ssize_t capacity) {
    const char *end_of_buffer = data + capacity;
    Py_ssize_t start = 0;
    line = 0;
    while (start <= size) {
        const char *found = (const char *)memchr(data + start, '\n', (size_t)(size - start));
        Py_ssize_t end = found == nullptr ? size : found - data;
        line++;
        size_t length = (size_t)(end - start);
        if (length > 0 && !blank(data + start, length)) {
            element doc = parse_line(data + start, length, end_of_buffer);
            object root;
            if (doc.get(root) != simdjson::SUCCESS) {
                fall_back("a line that is not a JSON object");
            }
            item(root);
        }
        start = end + 1;
    }
    for (int table : table_order) {
        flush(table);
    }
    return flushes.release();
}

/* A root row's random key: the Python engine's own function (row_keys.new_random_id), called
 * once per root row, so both cores draw the same keys from the same source. */
std::string Core::random_key() {
    if (root_key.get() == nullptr) {
        root_key = Ref(checked(PyObject_GetAttrString(o.hooks, "root_key")));
    }
    Ref key(checked(PyObject_CallNoArgs(root_key.get())));
    Py_ssize_t length;
    const char *utf8 = PyUnicode_AsUTF8AndSize(key.get(), &length);
    if (utf8 == nullptr) {
        throw PyFailure{};
    }
    return std::string(utf8, (size_t)length);
}

void Core::item(object data) {
    seq = 0;
    if (root_table < 0) {
        Ref met(checked(PyObject_CallMethod(o.hooks, "root", "l", line)));
        if (met.get() != Py_True) {
            fall_back("the contract refuses the root table");
        }
        Ref parts(checked(PyTuple_Pack(1, o.root_name)));
        root_table = table_named(o.root_name, parts.get());
    }
    int table = root_table;
    begin_row(table);
    int64_t row = tables[table].rows;
    std::vector<Pending> pending;
    int64_t width = 0;
    row_level = 0;
    flatten(data, ROOT_NODE, 0, table, row, pending, width);
    place_text(table, column_named(table, "_dlt_load_id"), row, o.load_id_utf8);
    std::string row_id = random_key();
    place_text(table, column_named(table, "_dlt_id"), row, row_id);
    end_row(table);
    process_lists(pending, table, row_id, o.propagate_root_key ? &row_id : nullptr);
}

int Core::child_node(int parent, std::string_view key) {
    auto found = nodes[parent].children.find(key);
    if (found != nodes[parent].children.end()) {
        return found->second;
    }
    Ref key_object(checked(PyUnicode_DecodeUTF8(key.data(), (Py_ssize_t)key.size(), nullptr)));
    Ref entry(checked(
        PyObject_CallMethod(o.hooks, "name", "OO", nodes[parent].parts, key_object.get())));
    PyObject *parts, *column;
    if (!PyArg_ParseTuple(entry.get(), "O!U", &PyTuple_Type, &parts, &column)) {
        throw PyFailure{};
    }
    Py_ssize_t length;
    const char *utf8 = PyUnicode_AsUTF8AndSize(column, &length);
    if (utf8 == nullptr) {
        throw PyFailure{};
    }
    Node node;
    Py_INCREF(parts);
    Py_INCREF(column);
    node.parts = parts;
    node.column = column;
    node.column_utf8.assign(utf8, (size_t)length);
    node.key.assign(key);
    node.system = node.column_utf8.compare(0, 5, "_dlt_") == 0;
    int id = (int)nodes.size();
    auto twin = nodes[parent].child_columns.find(node.column_utf8);
    if (twin != nodes[parent].child_columns.end()) {
        node.twin = true; /* two source keys, one name: the last value wins (see flatten) */
        nodes[twin->second].twin = true;
    } else {
        nodes[parent].child_columns.emplace(node.column_utf8, id);
    }
    nodes.push_back(std::move(node));
    nodes[parent].children.emplace(std::string(key), id);
    return id;
}

int Core::table_named(PyObject *name, PyObject *parts) {
    Py_ssize_t length;
    const char *utf8 = PyUnicode_AsUTF8AndSize(name, &length);
    if (utf8 == nullptr) {
        throw PyFailure{};
    }
    std::string_view key(utf8, (size_t)length);
    auto found = table_ids.find(key);
    if (found != table_ids.end()) {
        return found->second;
    }
    Table table;
    Py_INCREF(name);
    Py_INCREF(parts);
    table.name = name;
    table.parts = parts;
    table.name_utf8.assign(key);
    int id = (int)tables.size();
    tables.push_back(std::move(table));
    table_ids.emplace(std::string(key), id);
    return id;
}

int Core::child_table(int parent_table, int node) {
    Table &parent = tables[parent_table];
    auto found = parent.children.find(node);
    if (found != parent.children.end()) {
        return found->second;
    }
    Ref met(checked(PyObject_CallMethod(o.hooks, "table", "OOOll", parent.parts, nodes[node].parts,
                                        parent.name, line, seq)));
    if (met.get() == Py_None) {
        fall_back("the contract refuses a nested table");
    }
    PyObject *parts, *name;
    if (!PyArg_ParseTuple(met.get(), "O!U", &PyTuple_Type, &parts, &name)) {
        throw PyFailure{};
    }
    int id = table_named(name, parts);
    tables[parent_table].children.emplace(node, id);
    return id;
}

int Core::make_column(Table &t, PyObject *name, const std::string &utf8) {
    Ref known(checked(PyObject_CallMethod(o.hooks, "column_type", "OO", t.name, name)));
    Column c;
    if (known.get() != Py_None) {
        Py_ssize_t length;
        const char *type = PyUnicode_AsUTF8AndSize(known.get(), &length);
        if (type == nullptr) {
            throw PyFailure{};
        }
        c.kind = kind_of(std::string_view(type, (size_t)length));
    }
    Py_INCREF(name);
    c.name = name;
    c.name_utf8 = utf8;
    int index = (int)t.columns.size();
    t.columns.push_back(std::move(c));
    t.by_name.emplace(utf8, index);
    return index;
}

int Core::column_of_node(int table, int node) {
    Table &t = tables[table];
    if ((size_t)node < t.node_columns.size() && t.node_columns[node] >= 0) {
        return t.node_columns[node];
    }
    if (t.node_columns.size() <= (size_t)node) {
        t.node_columns.resize(nodes.size() + 64, -1);
    }
    Node &n = nodes[node];
    auto found = t.by_name.find(n.column_utf8);
    int index = found != t.by_name.end() ? found->second : make_column(t, n.column, n.column_utf8);
    t.node_columns[node] = index;
    return index;
}

int Core::column_named(int table, const char *name) {
    Table &t = tables[table];
    auto found = t.by_name.find(std::string_view(name));
    if (found != t.by_name.end()) {
        return found->second;
    }
    Ref text(checked(PyUnicode_FromString(name)));
    return make_column(t, text.get(), std::string(name));
}

void Core::begin_row(int table) {
    Table &t = tables[table];
    if (!t.ordered) {
        t.ordered = true;
        table_order.push_back(table);
    }
    row_serial++;
}

void Core::end_row(int table) {
    Table &t = tables[table];
    t.rows++;
    if (t.rows >= o.flush_rows) {
        flush(table);
    }
}

void Core::flush(int table) {
    Table &t = tables[table];
    if (t.rows == 0) {
        return;
    }
    Ref records(checked(PyList_New(0)));
    for (Column &c : t.columns) {
        if (c.values == 0) {
            c.reset();
            continue;
        }
        Ref record(column_record(c, t.rows));
        if (PyList_Append(records.get(), record.get()) < 0) {
            throw PyFailure{};
        }
        c.reset();
    }
    Ref entry(checked(Py_BuildValue("(OLO)", t.name, (long long)t.rows, records.get())));
    if (PyList_Append(flushes.get(), entry.get()) < 0) {
        throw PyFailure{};
    }
    t.rows = 0;
}

Column &Core::claim(int table, int column) {
    Column &c = tables[table].columns[column];
    if (c.stamp == row_serial) {
        fall_back("two keys of one row name one column (" + c.name_utf8 + ")");
    }
    c.stamp = row_serial;
    seq++;
    return c;
}

/* ColumnTypes.new_column for a column's first value: the type the Python engine gives it.
 * Only a type this file stores the value as, unconverted or as common ISO text, stays. */
Kind Core::decide(int table, Column &c, PyObject *value, const char *vt) {
    Ref value_ref(value);
    Ref type(checked(PyObject_CallMethod(o.hooks, "new_column", "OOOsll", tables[table].name,
                                         c.name, value, vt, line, seq)));
    if (type.get() == Py_None || !PyUnicode_Check(type.get())) {
        fall_back("the contract drops a new column's value");
    }
    Py_ssize_t length;
    const char *text = PyUnicode_AsUTF8AndSize(type.get(), &length);
    if (text == nullptr) {
        throw PyFailure{};
    }
    std::string_view t(text, (size_t)length);
    if (t.empty()) {
        fall_back("the contract drops a row");
    }
    /* a type other than the value's: placed (coerced) as any later value is, or handed back */
    c.kind = kind_of(t);
    return c.kind;
}

void Core::place_text(int table, int column, int64_t row, std::string_view value) {
    Column &c = claim(table, column);
    if (value.size() >= 3 && memcmp(value.data(), MARK, 3) == 0) {
        fall_back("a value marked by extract");
    }
    if (c.kind == K_UNTYPED) {
        decide(table, c,
               checked(PyUnicode_DecodeUTF8(value.data(), (Py_ssize_t)value.size(), nullptr)),
               "text");
    }
    if (c.kind == K_TEXT) {
        c.text(row, value);
        return;
    }
    int64_t micros;
    if (c.kind == K_TIMESTAMP && common_iso_micros(value, &micros)) {
        c.fixed64(row, micros);
        return;
    }
    fall_back("text into a column of another type");
}

void Core::place_int(int table, int column, int64_t row, int64_t value) {
    Column &c = claim(table, column);
    if (c.kind == K_UNTYPED) {
        decide(table, c, checked(PyLong_FromLongLong(value)), "bigint");
    }
    switch (c.kind) {
    case K_BIGINT:
        c.fixed64(row, value);
        return;
    case K_DOUBLE: { /* data_types' float(value): the nearest double, as this cast */
        double real = (double)value;
        int64_t bits;
        memcpy(&bits, &real, 8);
        c.fixed64(row, bits);
        return;
    }
    case K_TEXT: /* str(value) */
        c.text(row, std::to_string(value));
        return;
    default:
        fall_back("an integer into a column of another type");
    }
}

void Core::place(int table, int column, int64_t row, element value) {
    switch (value.type()) {
    case element_type::STRING:
        place_text(table, column, row, value.get_string().value_unsafe());
        return;
    case element_type::INT64:
        place_int(table, column, row, value.get_int64().value_unsafe());
        return;
    case element_type::NULL_VALUE:
        claim(table, column);
        return;
    case element_type::DOUBLE: {
        Column &c = claim(table, column);
        double real = value.get_double().value_unsafe();
        if (c.kind == K_UNTYPED) {
            decide(table, c, checked(PyFloat_FromDouble(real)), "double");
        }
        if (c.kind == K_DOUBLE) {
            int64_t bits;
            memcpy(&bits, &real, 8);
            c.fixed64(row, bits);
            return;
        }
        /* data_types' bigint of a whole double within int64; else a variant (Python's) */
        if (c.kind == K_BIGINT && std::isfinite(real) && real == std::floor(real) &&
            real >= -9223372036854775808.0 && real < 9223372036854775808.0) {
            c.fixed64(row, (int64_t)real);
            return;
        }
        fall_back("a double into a column of another type");
    }
    case element_type::BOOL: {
        Column &c = claim(table, column);
        bool truth = value.get_bool().value_unsafe();
        if (c.kind == K_UNTYPED) {
            PyObject *object = truth ? Py_True : Py_False;
            Py_INCREF(object);
            decide(table, c, object, "bool");
        }
        if (c.kind == K_BOOL) {
            c.boolean(row, truth);
            return;
        }
        if (c.kind == K_TEXT) { /* str(True) */
            c.text(row, truth ? "True" : "False");
            return;
        }
        fall_back("a bool into a column of another type");
    }
    case element_type::UINT64:
        fall_back("an integer beyond int64");
    default:
        fall_back("a value of no JSON scalar type");
    }
}

/* RowFlattener.flatten: this level's keys in order, lists set aside, nested objects after
 * this level's keys, the last one first. */
void Core::flatten(object data, int prefix, int depth, int table, int64_t row,
                   std::vector<Pending> &pending, int64_t &width) {
    if (depth > MAX_WALK_DEPTH) {
        fall_back("nested deeper than the native walk goes");
    }
    uint64_t visit = ++object_visit;
    bool expand = depth < o.max_nesting;
    size_t deferred_base = deferred.size();
    std::vector<int> merged; /* later twins whose value went to their first twin's place */
    size_t base = key_nodes.size();
    name_keys(data, table, prefix);
    size_t at = base;
    for (auto field : data) {
        int node = key_nodes[at++];
        if (nodes[node].system) {
            fall_back("a key named as the engine's own `_dlt_` columns");
        }
        if (nodes[node].visit == visit) {
            fall_back("a key repeated in one object");
        }
        nodes[node].visit = visit;
        element value = field.value;
        if (nodes[node].twin) {
            if (std::find(merged.begin(), merged.end(), node) != merged.end()) {
                continue;
            }
            value = last_twin(data, base, at - base, merged);
        }
        if (++width > MAX_ROW_WIDTH) {
            fall_back("a very wide row");
        }
        element_type type = value.type();
        if (type == element_type::OBJECT || type == element_type::ARRAY) {
            if (!expand) {
                fall_back("a value at max_nesting (json)");
            }
            int column = column_of_node(table, node);
            if (tables[table].columns[column].kind == K_JSON) {
                fall_back("an object or list into a json column");
            }
            if (type == element_type::OBJECT) {
                deferred.emplace_back(value.get_object().value_unsafe(), node);
            } else {
                pending.push_back(Pending{node, value.get_array().value_unsafe(), row_level + 1});
            }
            continue;
        }
        place(table, column_of_node(table, node), row, value);
    }
    key_nodes.resize(base);
    for (size_t i = deferred.size(); i > deferred_base; i--) {
        std::pair<object, int> next = deferred[i - 1]; /* a copy: the stack grows below */
        flatten(next.first, next.second, depth + 1, table, row, pending, width);
    }
    deferred.resize(deferred_base);
}

/* Every key of `data` named first, in order (the Python loop names this level's keys before
 * its nested objects too), so a key's twin later in the object is known when it is met.
 * Objects under one prefix mostly repeat their keys in one order: each key is compared with
 * the one at its place last time, and looked up only when it differs. */
void Core::name_keys(object data, int table, int prefix) {
    size_t base = key_nodes.size();
    size_t index = 0;
    bool same = true;
    for (auto field : data) {
        const std::vector<int> &last = order_of(table, prefix);
        int id = -1;
        if (index < last.size() && nodes[last[index]].key == field.key) {
            id = last[index];
        } else {
            id = child_node(prefix, field.key);
            same = false;
        }
        key_nodes.push_back(id);
        index++;
    }
    std::vector<int> &last = order_of(table, prefix);
    if (!same || index != last.size()) {
        last.assign(key_nodes.begin() + (long)base, key_nodes.end());
    }
}

/* Keys of one object whose names are one column ("+1", "-1" -> "_1" in sql_cs_v1): the
 * row dict keeps the first key's place and the last key's value. The later twins are noted in
 * `merged` to be skipped; twins that hold an object or a list go back to Python. `at` is
 * the 1-based field of the first twin, `base` where the object's nodes start in key_nodes. */
element Core::last_twin(object data, size_t base, size_t at, std::vector<int> &merged) {
    element value;
    size_t index = 0;
    int node = key_nodes[base + at - 1];
    for (auto field : data) {
        index++;
        if (index < at) {
            continue;
        }
        int other = key_nodes[base + index - 1];
        if (other == node || nodes[other].column_utf8 == nodes[node].column_utf8) {
            element_type type = field.value.type();
            if (type == element_type::OBJECT || type == element_type::ARRAY) {
                fall_back("keys of one name holding an object or a list");
            }
            value = field.value;
            if (other != node) {
                merged.push_back(other);
            }
        }
    }
    return value;
}

void Core::process_lists(std::vector<Pending> &pending, int table, const std::string &parent_id,
                         const std::string *root_id) {
    for (size_t i = 0; i < pending.size(); i++) {
        for (size_t j = i + 1; j < pending.size(); j++) {
            if (pending[i].node == pending[j].node) {
                fall_back("two lists of one path in one row");
            }
        }
    }
    for (Pending &p : pending) {
        process_list(p.items, table, p.node, p.depth, parent_id, root_id);
    }
}

/* RowFlattener.process_list: each element a row of the nested table, depth first. */
void Core::process_list(array items, int parent_table, int node, int depth,
                        const std::string &parent_id, const std::string *root_id) {
    if (items.size() == 0) {
        return;
    }
    int table = child_table(parent_table, node);
    int64_t index = 0;
    for (element value : items) {
        seq++;
        begin_row(table);
        int64_t row = tables[table].rows;
        std::vector<Pending> pending;
        int64_t width = 0;
        element_type type = value.type();
        if (type == element_type::OBJECT) {
            row_level = depth;
            flatten(value.get_object().value_unsafe(), ROOT_NODE, depth, table, row, pending,
                    width);
        } else if (type == element_type::ARRAY) {
            /* a row {"list": element} one level down, as dlt wraps it */
            if (depth + 1 >= o.max_nesting ||
                tables[table].columns[column_named(table, "list")].kind == K_JSON) {
                fall_back("a list at max_nesting or into a json column");
            }
            pending.push_back(Pending{LIST_NODE, value.get_array().value_unsafe(), depth + 2});
        } else {
            place(table, column_named(table, "value"), row, value);
        }
        if (root_id != nullptr) {
            place_text(table, column_named(table, "_dlt_root_id"), row, *root_id);
        }
        place_text(table, column_named(table, "_dlt_parent_id"), row, parent_id);
        place_int(table, column_named(table, "_dlt_list_idx"), row, index);
        std::string text = parent_id;
        text.push_back('_');
        text.append(tables[table].name_utf8);
        text.push_back('_');
        text.append(std::to_string(index));
        unsigned char digest[10];
        shake128_10(text, digest);
        std::string row_id = key_text(digest);
        place_text(table, column_named(table, "_dlt_id"), row, row_id);
        end_row(table);
        process_lists(pending, table, row_id, root_id);
        index++;
    }
}

/* ---- the module ------------------------------------------------------------------------ */

struct Buffer {
    Py_buffer view{};
    bool held = false;
    ~Buffer() {
        if (held) {
            PyBuffer_Release(&view);
        }
    }
};

PyObject *native_run_chunk(PyObject *, PyObject *args) {
    PyObject *data, *hooks, *load_id, *root_name;
    Py_ssize_t size;
    long chunk_index, max_nesting, flush_rows;
    int propagate_root_key;
    if (!PyArg_ParseTuple(args, "OnOUUlllp", &data, &size, &hooks, &load_id, &root_name,
                          &chunk_index, &max_nesting, &flush_rows, &propagate_root_key)) {
        return nullptr;
    }
    Buffer buffer;
    if (PyObject_GetBuffer(data, &buffer.view, PyBUF_SIMPLE) < 0) {
        return nullptr;
    }
    buffer.held = true;
    if (size < 0 || size > buffer.view.len) {
        PyErr_SetString(PyExc_ValueError, "size beyond the buffer");
        return nullptr;
    }
    Options options;
    options.hooks = hooks;
    options.load_id = load_id;
    Py_ssize_t length;
    const char *utf8 = PyUnicode_AsUTF8AndSize(load_id, &length);
    if (utf8 == nullptr) {
        return nullptr;
    }
    options.load_id_utf8.assign(utf8, (size_t)length);
    options.root_name = root_name;
    options.chunk_index = chunk_index;
    options.max_nesting = max_nesting;
    options.flush_rows = flush_rows < 1 ? 1 : flush_rows;
    options.propagate_root_key = propagate_root_key != 0;
    try {
        Core core(options);
        return core.run((const char *)buffer.view.buf, size, buffer.view.len);
    } catch (const Fallback &fallback) {
        PyErr_SetString(NativeFallback, fallback.reason.c_str());
        return nullptr;
    } catch (const PyFailure &) {
        return nullptr;
    } catch (const std::bad_alloc &) {
        return PyErr_NoMemory();
    }
}

/* The parser alone over a buffer of JSON lines (no output): the benchmark's floor. */
PyObject *native_parse_lines(PyObject *, PyObject *args) {
    PyObject *data;
    if (!PyArg_ParseTuple(args, "O", &data)) {
        return nullptr;
    }
    Buffer buffer;
    if (PyObject_GetBuffer(data, &buffer.view, PyBUF_SIMPLE) < 0) {
        return nullptr;
    }
    buffer.held = true;
    const char *text = (const char *)buffer.view.buf;
    Py_ssize_t size = buffer.view.len;
    long documents = 0;
    bool out_of_memory = false;
    Py_BEGIN_ALLOW_THREADS;
    try { /* no exception may leave the block that released the GIL */
        simdjson::dom::parser parser;
        std::string padded;
        Py_ssize_t start = 0;
        while (start < size) {
            const char *found = (const char *)memchr(text + start, '\n', (size_t)(size - start));
            Py_ssize_t end = found == nullptr ? size : found - text;
            size_t length = (size_t)(end - start);
            const char *at = text + start;
            if (at + length + simdjson::SIMDJSON_PADDING > text + size) {
                padded.assign(at, length);
                padded.append(simdjson::SIMDJSON_PADDING, '\0');
                at = padded.data();
            }
            element doc;
            if (length > 0 && !parser.parse((const uint8_t *)at, length, false).get(doc)) {
                documents++;
            }
            start = end + 1;
        }
    } catch (const std::bad_alloc &) {
        out_of_memory = true;
    }
    Py_END_ALLOW_THREADS;
    if (out_of_memory) {
        return PyErr_NoMemory();
    }
    return PyLong_FromLong(documents);
}

PyObject *native_shake_key(PyObject *, PyObject *args) {
    const char *text;
    Py_ssize_t length;
    if (!PyArg_ParseTuple(args, "s#", &text, &length)) {
        return nullptr;
    }
    unsigned char digest[10];
    shake128_10(std::string(text, (size_t)length), digest);
    std::string key = key_text(digest);
    return PyUnicode_FromStringAndSize(key.data(), (Py_ssize_t)key.size());
}

PyMethodDef METHODS[] = {
    {"run_chunk", native_run_chunk, METH_VARARGS,
     "run_chunk(data, size, hooks, load_id, root, chunk_index, max_nesting, flush_rows, "
     "propagate_root_key) -> [(table, rows, [(column, validity, *buffers)])]: a chunk's "
     "lines as the flushes of its tables, or NativeFallback naming why not."},
    {"parse_lines", native_parse_lines, METH_VARARGS,
     "parse_lines(data) -> documents: simdjson over every line, no output (the floor)."},
    {"shake_key", native_shake_key, METH_VARARGS,
     "shake_key(text) -> row_keys.digest_id(text), computed here."},
    {nullptr, nullptr, 0, nullptr}};

PyModuleDef MODULE = {PyModuleDef_HEAD_INIT, "_native_core",
                      "The native engine core (see native_core.py).", -1, METHODS};

} // namespace

PyMODINIT_FUNC PyInit__native_core(void) {
    PyObject *module = PyModule_Create(&MODULE);
    if (module == nullptr) {
        return nullptr;
    }
    NativeFallback = PyErr_NewException(
        "loadstone.plugins.normalizers.relational._native_core.NativeFallback", PyExc_ValueError,
        nullptr);
    if (NativeFallback == nullptr || PyModule_AddObject(module, "NativeFallback", NativeFallback) < 0) {
        Py_XDECREF(NativeFallback);
        Py_DECREF(module);
        return nullptr;
    }
    Py_INCREF(NativeFallback);
    return module;
}
