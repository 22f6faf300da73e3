// The MIMO-OFDM resource grid that the transmitter, the channel model and the
// receiver front end share (docs/front_end.md).
//
// A frame is one preamble symbol, then `slots` slots of `data_symbols` data
// symbols and one or more pilot symbols, every symbol with a cyclic prefix of
// `cp_length` samples. With the default pilot layout (one pilot symbol, first):
//
//   [CP|preamble] [CP|pilot] [CP|data] x D  [CP|pilot] [CP|data] x D  ...
//
// `pilot_positions` puts P pilot symbols anywhere in a slot of P + D symbols
// (as NR's additional DMRS positions do), e.g. {0, 7} with D = 12: pilot,
// 6 data, pilot, 6 data. Denser layouts follow faster fading (Doppler) at
// the cost of data symbols.
//
// Used subcarriers: `used_subcarriers` of them, centred on DC, ascending in
// frequency (logical index i = 0 .. U-1); with `dc_null` (LTE) the DC bin is
// skipped, U/2 below it and U/2 above. The preamble (Schmidl-Cox: PN QPSK on
// the subcarriers of even frequency offset, so its time signal has two equal
// halves) is shared among the antennas, even subcarrier 2m going out of
// antenna m mod nt: the sum stays two equal halves and the receiver's timing
// and CFO see every antenna's channel (diversity), not one antenna's fade. In a pilot
// symbol, logical subcarrier i belongs to antenna i mod nt (disjoint combs, the other
// antennas silent there): antenna t sends a known unit-modulus QPSK value times sqrt(nt),
// so every antenna sends the same power in pilot and data symbols. Data symbols carry nt
// streams on every used subcarrier.
//
// Resource-element order, the detector interface's channel-reuse order: slot
// j, subcarrier c, data symbol s -> problem (j * U + c) * D + s, its nt * Q
// bits stream-major. The transmitter maps coded bits in this order and the
// receiver emits H and y in it, so the detector's LLRs are the codeword.
//
// FFT scaling: unitary (1/sqrt(N) both ways), so a time-domain noise of
// variance N0 per complex sample is N0 per resource element, the detectors'
// N0, and unit-energy symbols give SNR = 1 / N0 per receive antenna and stream.
#pragma once

#include <mimo_gpu/constellation.h>

#include <string>
#include <vector>

namespace mimo_gpu {

/// NR's most DMRS positions in a slot (one and three additional ones).
constexpr int k_max_pilot_symbols_per_slot = 4;

struct ofdm_grid {
    int fft_size = 128; ///< N, power of two or any size FFTW / cuFFT take (16..65536)
    int cp_length = 9;  ///< cyclic prefix samples (0..N/4)
    int used_subcarriers = 72; ///< U, even, <= N - 1 - dc_null
    bool dc_null = true;       ///< LTE: DC unused; NR: DC carries data
    double sample_rate =
        1.92e6;           ///< Hz (delay profiles, recordings, the GPU receiver's batches)
    int nt = 2;           ///< transmit antennas = spatial streams (1..8)
    int data_symbols = 6; ///< D, data symbols per slot
    int slots = 2;        ///< slots per frame
    /// Positions of the slot's pilot symbols among its P + D symbols: 1 to
    /// k_max_pilot_symbols_per_slot of them, ascending, in 0 .. P + D - 1.
    std::vector<int> pilot_positions{ 0 };
    modulation mod = modulation::qam16;

    /// LTE ("lte1.4", "lte3", "lte5", "lte10", "lte15", "lte20": 15 kHz, normal CP
    /// of 144/2048 N for every symbol, DC null) and NR 30 kHz ("nr20", "nr40",
    /// "nr100": 51/106/273 resource blocks, CP 144/2048 N, DC used). Slot layout,
    /// nt and modulation keep their defaults; set them after. Throws
    /// std::invalid_argument for an unknown name (listing the known ones).
    static ofdm_grid preset(const std::string& name);
    static std::vector<std::string> preset_names();

    /// Throws std::invalid_argument naming the first bad field.
    void validate() const;

    int symbol_samples() const { return fft_size + cp_length; }
    int pilot_symbols_per_slot() const { return int(pilot_positions.size()); }
    /// Pilot symbols per frame (q = j P + p: slot j's p-th).
    int pilot_symbols() const { return slots * pilot_symbols_per_slot(); }
    /// Pilot and data symbols of a slot.
    int slot_symbols() const { return pilot_symbols_per_slot() + data_symbols; }
    /// OFDM symbols of a frame: the preamble and the slots.
    int frame_symbols() const { return 1 + slots * slot_symbols(); }
    int frame_samples() const { return symbol_samples() * frame_symbols(); }
    /// Frame symbol (the preamble is 0) of slot j's pilot symbol p (0..P-1)
    /// and of its data symbol s (0..D-1).
    int pilot_symbol(int slot, int p) const;
    int data_symbol(int slot, int s) const;
    /// Parses a pilot layout as a user writes it ("0", "0,7", "2 7 11";
    /// commas or spaces). Throws std::invalid_argument for text that is not
    /// integers; validate() checks the positions.
    static std::vector<int> parse_pilot_positions(const std::string& text);
    /// Resource elements carrying data per frame (per stream).
    size_t data_elements() const
    {
        return size_t(slots) * used_subcarriers * data_symbols;
    }
    /// Coded bits per frame: data_elements * nt * Q.
    size_t frame_bits() const;
    double subcarrier_spacing() const { return sample_rate / fft_size; }

    /// FFT bin (0..N-1) of logical subcarrier i (0..U-1).
    int bin(int i) const;
    /// Frequency offset of logical subcarrier i in subcarrier spacings (DC = 0).
    int offset(int i) const;
    /// Known pilot value (QPSK, unit modulus, before the sqrt(nt) boost) of
    /// logical subcarrier i in the frame's pilot symbol q (q = j P + p: slot
    /// j's p-th); the PN sequence is fixed.
    cfloat pilot(int q, int i) const;
    /// Preamble value of logical subcarrier i: 0 at an odd offset(i), a known
    /// QPSK value of modulus sqrt(2 nt) at an even one (the power of a data
    /// symbol per antenna), sent by preamble_antenna(i).
    cfloat preamble(int i) const;
    int preamble_antenna(int i) const;
};

std::string describe(const ofdm_grid& g); ///< one line for logs and recordings
/// "0,7": the form parse_pilot_positions reads.
std::string pilot_positions_text(const std::vector<int>& positions);

/// Empty when a receiver made for `expected` can receive frames sent on
/// `recorded` (the same FFT, CP, subcarriers, DC use, streams, modulation and
/// slot layout, pilot positions included; the sample rate may differ: it scales time, not
/// the samples); otherwise the first field that differs, with both values, for an error.
std::string frame_mismatch(const ofdm_grid& recorded, const ofdm_grid& expected);

} // namespace mimo_gpu
