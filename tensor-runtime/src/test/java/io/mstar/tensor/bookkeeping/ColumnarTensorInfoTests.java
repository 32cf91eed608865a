package io.mstar.tensor.bookkeeping;

import org.junit.jupiter.api.Test;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class ColumnarTensorInfoTests {

    @Test
    void dtypeIndexRegistersOnFirstUseAndReusesAfter() {
        ColumnarTensorInfo c = new ColumnarTensorInfo("h:1", "worker-0", null, null, 1, 0);
        assertThat(c.dtypeIndex("bfloat16")).isZero();
        assertThat(c.dtypeIndex("int64")).isEqualTo(1);
        assertThat(c.dtypeIndex("bfloat16")).isZero();
        assertThat(c.dtypeNames()).containsExactly("bfloat16", "int64");
    }

    @Test
    void rowsFillEveryColumnInOrderAndFlattenDims() {
        ColumnarTensorInfo c = new ColumnarTensorInfo("h:1", "worker-0", "vae", "w", 4, 2);
        int f = c.dtypeIndex("float32");
        for (int i = 0; i < 40; i++) {
            c.addRow(i, 1000 + i, 4L * i, 2, new long[]{i, 2, 99}, new long[]{2, 1, 99}, f);
        }
        assertThat(c.size()).isEqualTo(40);
        assertThat(c.flatSize()).isEqualTo(80);
        assertThat(c.uuid(39)).isEqualTo(39);
        assertThat(c.address(7)).isEqualTo(1007);
        assertThat(c.nbytes(7)).isEqualTo(28);
        assertThat(c.dimsFlat(14)).isEqualTo(7);
        assertThat(c.strideFlat(15)).isEqualTo(1);
        assertThat(c.toPointerInfos().get(7).dims()).containsExactly(7L, 2L);
        assertThat(c.toPointerInfos().get(7).sourceTpRank()).isEqualTo(2);
        c.clear();
        assertThat(c.size()).isZero();
        assertThat(c.uuids()).isEmpty();
    }

    @Test
    void canonicalDescriptionsBecomeRowsWithTheirDtypesRegistered() {
        ColumnarTensorInfo c = new ColumnarTensorInfo("h:1", "worker-0", null, null, 1, 0);
        c.addTensorsCanonical(new long[]{5, 6}, List.of(
                new ColumnarTensorInfo.Canonical(new long[]{2, 2}, new long[]{2, 1}, "uint8", 4, 0x10),
                new ColumnarTensorInfo.Canonical(new long[]{3}, new long[]{1}, "int32", 12, 0x20)));
        assertThat(c.dtypeName(c.dtypeIdx(1))).isEqualTo("int32");
        assertThat(c.toPointerInfos().get(0).dims()).containsExactly(2L, 2L);
        assertThat(c.uuids()).containsExactly(5, 6);
    }

    @Test
    void aRowWithAnUnregisteredDtypeOrShortDimsIsRejected() {
        ColumnarTensorInfo c = new ColumnarTensorInfo("h:1", "worker-0", null, null, 1, 0);
        assertThatThrownBy(() -> c.addRow(1, 0, 0, 1, new long[]{1}, new long[]{1}, 0))
                .isInstanceOf(IllegalArgumentException.class);
        int f = c.dtypeIndex("float32");
        assertThatThrownBy(() -> c.addRow(1, 0, 0, 2, new long[]{1}, new long[]{1, 1}, f))
                .isInstanceOf(IllegalArgumentException.class);
        assertThat(c.size()).isZero();
    }
}
