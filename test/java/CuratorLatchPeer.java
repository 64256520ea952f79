// A Java Apache Curator LeaderLatch participant for the interop test (Debian libcurator-recipes-java 5.4).
// Usage: java -cp curator-recipes.jar:zookeeper.jar CuratorLatchPeer.java <connect> <namespace> <latchPath> <id>
// Prints "LEADER <id>" when it becomes leader; reads commands from stdin: "participants", "close".
import java.io.BufferedReader;
import java.io.InputStreamReader;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.recipes.leader.LeaderLatch;
import org.apache.curator.framework.recipes.leader.LeaderLatchListener;
import org.apache.curator.framework.recipes.leader.Participant;
import org.apache.curator.retry.ExponentialBackoffRetry;

public class CuratorLatchPeer {
    public static void main(String[] args) throws Exception {
        CuratorFramework client = CuratorFrameworkFactory.builder()
                .connectString(args[0]).namespace(args[1])
                .sessionTimeoutMs(4000).connectionTimeoutMs(4000)
                .retryPolicy(new ExponentialBackoffRetry(100, 3)).build();
        client.start();
        client.blockUntilConnected();
        String id = args[3];
        LeaderLatch latch = new LeaderLatch(client, args[2], id);
        latch.addListener(new LeaderLatchListener() {
            public void isLeader() { System.out.println("LEADER " + id); System.out.flush(); }
            public void notLeader() { System.out.println("NOT_LEADER " + id); System.out.flush(); }
        });
        latch.start();
        System.out.println("STARTED " + id);
        System.out.flush();
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in));
        String line;
        while ((line = in.readLine()) != null) {
            if (line.equals("participants")) {
                StringBuilder out = new StringBuilder("PARTICIPANTS");
                for (Participant p : latch.getParticipants()) out.append(' ').append(p.getId()).append(p.isLeader() ? "*" : "");
                System.out.println(out);
                System.out.flush();
            } else if (line.equals("close")) {
                break;
            }
        }
        latch.close();
        client.close();
        System.out.println("CLOSED " + id);
        System.out.flush();
    }
}
