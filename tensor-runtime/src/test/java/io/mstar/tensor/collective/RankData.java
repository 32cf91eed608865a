package io.mstar.tensor.collective;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Random;

import io.mstar.tensor.device.HostBuffer;

/**
 * What the ranks of a test contribute and what they must get back, computed the same way in every thread and process:
 * floats of magnitudes from 1e-3 to 1e3, so that the order of the additions shows in the low bits.
 */
final class RankData {

    private RankData() {
    }

    static float[] floats(long seed, int rank, int n) {
        Random random = new Random(seed * 31 + rank);
        float[] values = new float[n];
        for (int i = 0; i < n; i++) {
            values[i] = (float) (random.nextGaussian() * Math.pow(10, random.nextInt(7) - 3));
        }
        return values;
    }

    static byte[] bytes(long seed, int rank, int n) {
        byte[] bytes = new byte[n];
        new Random(seed * 37 + rank).nextBytes(bytes);
        return bytes;
    }

    /** Element-wise {@code ((v0 + v1) + v2) + …}: the order {@link SharedMemoryCollective} promises. */
    static float[] rankOrderSum(long seed, int size, int n) {
        float[] sum = floats(seed, 0, n);
        for (int r = 1; r < size; r++) {
            float[] addend = floats(seed, r, n);
            for (int i = 0; i < n; i++) {
                sum[i] += addend[i];
            }
        }
        return sum;
    }

    static void write(HostBuffer buffer, long offset, float[] values) {
        ByteBuffer bytes = buffer.bytes().order(ByteOrder.LITTLE_ENDIAN);
        for (int i = 0; i < values.length; i++) {
            bytes.putFloat((int) offset + 4 * i, values[i]);
        }
    }

    static void write(HostBuffer buffer, long offset, byte[] values) {
        buffer.bytes().put((int) offset, values);
    }

    /** The floats' bits, so that a comparison is bitwise (and NaN-safe). */
    static int[] bits(HostBuffer buffer, long offset, int n) {
        ByteBuffer bytes = buffer.bytes().order(ByteOrder.LITTLE_ENDIAN);
        int[] bits = new int[n];
        for (int i = 0; i < n; i++) {
            bits[i] = bytes.getInt((int) offset + 4 * i);
        }
        return bits;
    }

    static int[] bits(float[] values) {
        int[] bits = new int[values.length];
        for (int i = 0; i < values.length; i++) {
            bits[i] = Float.floatToRawIntBits(values[i]);
        }
        return bits;
    }

    static byte[] read(HostBuffer buffer, long offset, int n) {
        byte[] bytes = new byte[n];
        buffer.bytes().get((int) offset, bytes);
        return bytes;
    }
}
